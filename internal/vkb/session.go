package vkb

import (
	"context"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
)

type sessionResult struct {
	Success   bool                       `json:"success"`
	Session   *conversation.Conversation `json:"session"`
	Exchanges []conversation.Exchange    `json:"exchanges,omitempty"`
}

type sessionStartIn struct {
	Platform       string         `json:"platform"`
	ProjectContext string         `json:"project_context"`
	ExternalRoomID string         `json:"external_room_id"`
	Metadata       map[string]any `json:"metadata"`
}

func (s *Server) sessionStart(ctx context.Context, c *registry.Call, in sessionStartIn) (*sessionResult, error) {
	conv, err := s.conv.Create(ctx, conversation.Draft{
		Workspace: c.Workspace, Platform: in.Platform, ProjectContext: in.ProjectContext,
		ExternalRoomID: in.ExternalRoomID, Metadata: in.Metadata, OwnerID: c.User.ID, OwnerTier: c.User.Tier,
	})
	if err != nil {
		return nil, err
	}
	return &sessionResult{Success: true, Session: conv}, nil
}

type sessionEndIn struct {
	SessionID string   `json:"session_id"`
	Summary   string   `json:"summary"`
	Themes    []string `json:"themes"`
	Status    string   `json:"status"`
}

func (s *Server) sessionEnd(ctx context.Context, c *registry.Call, in sessionEndIn) (*sessionResult, error) {
	conv, err := s.conv.End(ctx, c.Workspace, in.SessionID, in.Summary, in.Themes, in.Status)
	if err != nil {
		return nil, err
	}
	return &sessionResult{Success: true, Session: conv}, nil
}

type sessionGetIn struct {
	SessionID        string `json:"session_id"`
	IncludeExchanges bool   `json:"include_exchanges"`
	ExchangeLimit    int    `json:"exchange_limit"`
}

func (s *Server) sessionGet(ctx context.Context, c *registry.Call, in sessionGetIn) (*sessionResult, error) {
	conv, err := s.conv.Get(ctx, c.Workspace, in.SessionID)
	if err != nil {
		return nil, err
	}
	res := &sessionResult{Success: true, Session: conv}
	if in.IncludeExchanges {
		// The most recent exchanges, in order.
		res.Exchanges, _, err = s.conv.Exchanges(ctx, c.Workspace, conv.ID, in.ExchangeLimit, -in.ExchangeLimit)
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

type sessionListIn struct {
	Platform       string `json:"platform"`
	ProjectContext string `json:"project_context"`
	Status         string `json:"status"`
	Limit          int    `json:"limit"`
	Offset         int    `json:"offset"`
}

type sessionListResult struct {
	Success  bool                         `json:"success"`
	Sessions []*conversation.Conversation `json:"sessions"`
}

func (s *Server) sessionList(ctx context.Context, c *registry.Call, in sessionListIn) (*sessionListResult, error) {
	list, err := s.conv.List(ctx, c.Workspace, conversation.Filter{
		Platform: in.Platform, ProjectContext: in.ProjectContext, Status: in.Status, Limit: in.Limit, Offset: in.Offset,
		Owner: c.User.OnlyOwn(),
	})
	if err != nil {
		return nil, err
	}
	return &sessionListResult{Success: true, Sessions: list}, nil
}

type sessionFindByRoomIn struct {
	ExternalRoomID string `json:"external_room_id"`
	Platform       string `json:"platform"`
	Status         string `json:"status"`
}

func (s *Server) sessionFindByRoom(ctx context.Context, c *registry.Call, in sessionFindByRoomIn) (*sessionResult, error) {
	f := conversation.Filter{ExternalRoomID: in.ExternalRoomID, Platform: in.Platform, Status: in.Status, Limit: 1, Owner: c.User.OnlyOwn()}
	if in.Status == "" {
		// Prefer the room's active session.
		f.Status = conversation.Active
		if list, err := s.conv.List(ctx, c.Workspace, f); err != nil || len(list) > 0 {
			if err != nil {
				return nil, err
			}
			return &sessionResult{Success: true, Session: list[0]}, nil
		}
		f.Status = ""
	}
	list, err := s.conv.List(ctx, c.Workspace, f)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, errs.E(errs.NotFound, "no session for room %q", in.ExternalRoomID)
	}
	return &sessionResult{Success: true, Session: list[0]}, nil
}

type sessionRenameIn struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
}

// sessionRename sets a session's title. The pipeline has already refused a
// session_id the caller may not use (its owner and admins).
func (s *Server) sessionRename(ctx context.Context, c *registry.Call, in sessionRenameIn) (*sessionResult, error) {
	conv, err := s.conv.Rename(ctx, c.Workspace, in.SessionID, in.Title)
	if err != nil {
		return nil, err
	}
	return &sessionResult{Success: true, Session: conv}, nil
}

type sessionDeleteIn struct {
	SessionID string `json:"session_id"`
}

type sessionDeleteResult struct {
	Success          bool   `json:"success"`
	SessionID        string `json:"session_id"`
	DeletedExchanges int    `json:"deleted_exchanges"`
}

// sessionDelete deletes a session with its exchanges. The pipeline has
// already refused a session_id the caller may not use (its owner and
// admins).
func (s *Server) sessionDelete(ctx context.Context, c *registry.Call, in sessionDeleteIn) (*sessionDeleteResult, error) {
	n, err := s.conv.Delete(ctx, c.Workspace, in.SessionID)
	if err != nil {
		return nil, err
	}
	return &sessionDeleteResult{Success: true, SessionID: in.SessionID, DeletedExchanges: n}, nil
}
