package vkb

import (
	"context"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/registry"
)

type exchangeAddIn struct {
	SessionID string `json:"session_id"`
	Role      string `json:"role"`
	Content   string `json:"content"`
	ToolUses  []any  `json:"tool_uses"`
	CreatedAt string `json:"created_at"`
}

type exchangeAddResult struct {
	Success  bool                   `json:"success"`
	Exchange *conversation.Exchange `json:"exchange"`
}

func (s *Server) exchangeAdd(ctx context.Context, c *registry.Call, in exchangeAddIn) (*exchangeAddResult, error) {
	at, err := rfc3339("created_at", in.CreatedAt)
	if err != nil {
		return nil, err
	}
	ex, err := s.conv.AppendAt(ctx, c.Workspace, in.SessionID, in.Role, in.Content, in.ToolUses, at)
	if err != nil {
		return nil, err
	}
	return &exchangeAddResult{Success: true, Exchange: ex}, nil
}

type exchangeListIn struct {
	SessionID string `json:"session_id"`
	Limit     int    `json:"limit"`
	Offset    int    `json:"offset"`
}

type exchangeListResult struct {
	Success    bool                    `json:"success"`
	Exchanges  []conversation.Exchange `json:"exchanges"`
	TotalCount int                     `json:"total_count"`
}

func (s *Server) exchangeList(ctx context.Context, c *registry.Call, in exchangeListIn) (*exchangeListResult, error) {
	list, total, err := s.conv.Exchanges(ctx, c.Workspace, in.SessionID, in.Limit, in.Offset)
	if err != nil {
		return nil, err
	}
	return &exchangeListResult{Success: true, Exchanges: list, TotalCount: total}, nil
}
