package vault

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// memoryManager (contract section 4) on Nexus's own model: its sessions are
// conversations (the one conversation model: a memoryManager session, a vkb
// session, a chat conversation and a tutoring session are the same
// record), its workspaces Nexus workspaces (workspace.go), its states named
// snapshots of a session's context (table conversation_states). Nothing is
// stored twice. Sessions and states live in the call's workspace (its
// context.workspaceId, as for every tool); the original's binding of a
// session to another workspace is Obsidian-only ([OBS]) and not done: a
// conversation's workspace never changes.

// SessionPlatform is the platform of the conversations memoryManager
// creates.
const SessionPlatform = "vault"

func (s *Server) memoryModes() []registry.Def {
	return []registry.Def{
		def("createSession", "Start a session (a Nexus conversation) in the call's workspace, with a name, description and goal.", false, registry.Handle(s.createSession)),
		def("listSessions", "List the sessions of the call's workspace.", true, registry.Handle(s.listSessions)),
		def("loadSession", "Load a session (by id or name) with what it holds (its last exchanges and states); by default a new session continues it.", false, registry.Handle(s.loadSession)),
		def("updateSession", "Rename a session, or change its description or goal.", false, registry.Handle(s.updateSession)),
		def("createState", "Save a named snapshot of the session's context: the task, the files in play, the next steps and why.", false, registry.Handle(s.createState)),
		def("listStates", "List the states of the session, newest first, by tag.", true, registry.Handle(s.listStates)),
		def("loadState", "Restore a state (by id or name): its task, files, next steps and reasoning; optionally in a new session.", false, registry.Handle(s.loadState)),
		def("updateState", "Rename a state, change its description, add or remove tags.", false, registry.Handle(s.updateState)),
		def("createWorkspace", "Create a workspace: a project with a root folder in the vault, a purpose, a goal, workflows, key files and preferences.", false, registry.Handle(s.createWorkspace)),
		def("listWorkspaces", "List the workspaces you may use.", true, registry.Handle(s.listWorkspaces)),
		def("loadWorkspace", "Load a workspace (by id or name): its context, workflows, files, key files, preferences, recent sessions and states.", false, registry.Handle(s.loadWorkspace)),
		def("updateWorkspace", "Set one field of a workspace (fieldPath: name, description, rootFolder, preferences, context.purpose, context.currentGoal, context.workflows...).", false, registry.Handle(s.updateWorkspace)),
	}
}

// session is a conversation as memoryManager shows it.
func session(c *conversation.Conversation, wsName string) map[string]any {
	out := map[string]any{"id": c.ID, "workspaceId": c.Workspace, "name": c.Title, "description": c.ProjectContext,
		"startTime": c.CreatedAt.UnixMilli(), "isActive": c.Status == conversation.Active}
	if c.Title == "" {
		out["name"] = c.ID
	}
	if c.EndedAt != nil {
		out["endTime"] = c.EndedAt.UnixMilli()
	}
	if g, ok := c.Metadata["sessionGoal"]; ok {
		out["sessionGoal"] = g
	}
	if wsName != "" {
		out["workspaceName"] = wsName
	}
	return out
}

// wsName is the name of the call's workspace.
func (s *Server) wsName(ctx context.Context, id string) string {
	if w, err := s.loadWorkspaceRow(ctx, s.st.DB(), id); err == nil && w != nil {
		return w.Name
	}
	return id
}

// findSession finds a session of ws by id or, failing that, by name
// (exactly, without regard to case).
func (s *Server) findSession(ctx context.Context, ws, idOrName string) (*conversation.Conversation, error) {
	if idOrName == "" {
		return nil, errs.E(errs.BadRequest, "Session ID is required but not provided")
	}
	if c, err := s.conv.Get(ctx, ws, idOrName); err == nil {
		return c, nil
	}
	list, err := s.conv.List(ctx, ws, conversation.Filter{Limit: 1000})
	if err != nil {
		return nil, err
	}
	for _, c := range list {
		if strings.EqualFold(c.Title, idOrName) {
			return c, nil
		}
	}
	return nil, errs.E(errs.NotFound, "Session '%s' not found (searched by both name and ID)", idOrName)
}

type createSessionIn struct {
	Name                 string   `json:"name"`
	Description          string   `json:"description"`
	SessionGoal          string   `json:"sessionGoal"`
	PreviousSessionID    string   `json:"previousSessionId"`
	GenerateContextTrace *bool    `json:"generateContextTrace"`
	ContextDepth         string   `json:"contextDepth"`
	Tags                 []string `json:"tags"`
}

func (s *Server) newSession(ctx context.Context, c *registry.Call, name, description string, meta map[string]any) (*conversation.Conversation, error) {
	conv, err := s.conv.Create(ctx, conversation.Draft{Workspace: c.Workspace, Platform: SessionPlatform, ProjectContext: description, Metadata: meta, OwnerID: c.User.ID, OwnerTier: c.User.Tier})
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = "Session " + time.Now().UTC().Format("2006-01-02 15:04")
	}
	return s.conv.Rename(ctx, c.Workspace, conv.ID, name)
}

func (s *Server) createSession(ctx context.Context, c *registry.Call, in createSessionIn) (result, error) {
	meta := map[string]any{}
	if in.SessionGoal != "" {
		meta["sessionGoal"] = in.SessionGoal
	}
	if len(in.Tags) > 0 {
		meta["tags"] = in.Tags
	}
	if in.PreviousSessionID != "" {
		// The original looked the previous session up as a workspace (a
		// bug): here it is a session of this workspace.
		prev, err := s.findSession(ctx, c.Workspace, in.PreviousSessionID)
		if err != nil {
			return result{}, err
		}
		meta["previousSessionId"] = prev.ID
	}
	conv, err := s.newSession(ctx, c, strings.TrimSpace(in.Name), in.Description, meta)
	if err != nil {
		return result{}, err
	}
	ws := s.wsName(ctx, c.Workspace)
	summary := fmt.Sprintf("Session %q in workspace %q", conv.Title, ws)
	if in.SessionGoal != "" {
		summary += ". Goal: " + in.SessionGoal
	}
	if in.ContextDepth == "comprehensive" {
		if w, _ := s.loadWorkspaceRow(ctx, s.st.DB(), c.Workspace); w != nil {
			summary += fmt.Sprintf(". Workspace purpose: %v. Current goal: %v", w.Context["purpose"], w.Context["currentGoal"])
		}
	}
	return ok(map[string]any{"sessionId": conv.ID, "name": conv.Title, "description": conv.ProjectContext, "workspaceId": c.Workspace,
		"sessionContext": map[string]any{"summary": summary, "associatedNotes": []string{}, "sessionCreatedAt": conv.CreatedAt.UnixMilli()}}), nil
}

type listSessionsIn struct {
	Limit int    `json:"limit"`
	Order string `json:"order"`
}

func (s *Server) listSessions(ctx context.Context, c *registry.Call, in listSessionsIn) (result, error) {
	f := conversation.Filter{Limit: 1000}
	if !c.User.Admin() {
		f.Owner = c.User.ID
	}
	list, err := s.conv.List(ctx, c.Workspace, f)
	if err != nil {
		return result{}, err
	}
	total := len(list)
	size := total
	if in.Limit > 0 && in.Limit < total {
		size = in.Limit
	}
	page := list[:size]
	slices.SortStableFunc(page, func(a, b *conversation.Conversation) int {
		if in.Order == "asc" {
			return strings.Compare(strings.ToLower(a.Title), strings.ToLower(b.Title))
		}
		return strings.Compare(strings.ToLower(b.Title), strings.ToLower(a.Title))
	})
	ws := s.wsName(ctx, c.Workspace)
	items := make([]map[string]any, 0, len(page))
	for _, conv := range page {
		items = append(items, session(conv, ws))
	}
	pages := 1
	if size > 0 {
		pages = (total + size - 1) / size
	}
	return ok(map[string]any{"sessions": items, "total": total, "page": 0, "pageSize": size, "totalPages": pages, "hasNextPage": pages > 1, "hasPreviousPage": false}), nil
}

type loadSessionIn struct {
	TargetSessionID           string `json:"targetSessionId"`
	CreateContinuationSession *bool  `json:"createContinuationSession"`
	SessionName               string `json:"sessionName"`
	SessionDescription        string `json:"sessionDescription"`
}

func (s *Server) loadSession(ctx context.Context, c *registry.Call, in loadSessionIn) (result, error) {
	conv, err := s.findSession(ctx, c.Workspace, cmpOrStr(in.TargetSessionID, c.SessionID))
	if err != nil {
		return result{}, err
	}
	ex, total, err := s.conv.Exchanges(ctx, c.Workspace, conv.ID, 1000, 0)
	if err != nil {
		return result{}, err
	}
	recent := ex[max(0, len(ex)-10):]
	exchanges := make([]map[string]any, 0, len(recent))
	for _, e := range recent {
		exchanges = append(exchanges, map[string]any{"role": e.Role, "content": e.Content, "timestamp": e.CreatedAt.UnixMilli()})
	}
	states, _ := s.states(ctx, c.Workspace, conv.ID)
	names := make([]string, 0, len(states))
	for _, st := range states {
		names = append(names, st.Name)
	}
	data := session(conv, s.wsName(ctx, c.Workspace))
	data["sessionId"] = conv.ID
	delete(data, "id")
	data["sessionContext"] = map[string]any{"summary": cmpOrStr(conv.Summary, fmt.Sprintf("Session %q: %d exchanges, %d states", data["name"], total, len(states))), "associatedNotes": []string{}}
	data["restoredContext"] = map[string]any{"exchangeCount": total, "recentExchanges": exchanges, "states": names, "themes": conv.Themes}
	if in.CreateContinuationSession == nil || *in.CreateContinuationSession {
		name := cmpOrStr(in.SessionName, fmt.Sprintf("Continuation of %q", data["name"]))
		next, err := s.newSession(ctx, c, name, in.SessionDescription, map[string]any{"continues": conv.ID})
		if err != nil {
			return result{}, err
		}
		data["newSessionId"] = next.ID
	}
	return ok(data), nil
}

type updateSessionIn struct {
	TargetSessionID string  `json:"targetSessionId"`
	Name            *string `json:"name"`
	Description     *string `json:"description"`
	SessionGoal     *string `json:"sessionGoal"`
}

func (s *Server) updateSession(ctx context.Context, c *registry.Call, in updateSessionIn) (result, error) {
	if in.Name == nil && in.Description == nil && in.SessionGoal == nil {
		return result{}, errs.E(errs.BadRequest, "No updates provided for session")
	}
	conv, err := s.findSession(ctx, c.Workspace, cmpOrStr(in.TargetSessionID, c.SessionID))
	if err != nil {
		return result{}, err
	}
	if !c.User.Admin() && conv.Metadata != nil {
		if _, owner, _, _ := s.conv.Lookup(ctx, conv.ID); owner != "" && owner != c.User.ID {
			return result{}, errs.E(errs.Forbidden, "session %q is another user's", conv.ID)
		}
	}
	if in.Name != nil {
		if conv, err = s.conv.Rename(ctx, c.Workspace, conv.ID, *in.Name); err != nil {
			return result{}, err
		}
	}
	if in.Description != nil {
		if conv, err = s.conv.Describe(ctx, c.Workspace, conv.ID, *in.Description); err != nil {
			return result{}, err
		}
	}
	if in.SessionGoal != nil {
		if _, err := s.st.DB().ExecContext(ctx, s.st.Q(`UPDATE conversations SET metadata = ? WHERE id = ? AND workspace = ?`), goalMeta(conv.Metadata, *in.SessionGoal), conv.ID, c.Workspace); err != nil {
			return result{}, fmt.Errorf("update session: %w", err)
		}
	}
	return ok(map[string]any{"sessionId": conv.ID, "name": conv.Title, "description": conv.ProjectContext, "workspaceId": c.Workspace}), nil
}

func goalMeta(m map[string]any, goal string) string {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	out["sessionGoal"] = goal
	b, _ := json.Marshal(out)
	return string(b)
}

// state is a stored state.
type state struct {
	ID, Session, Workspace, Name, Description string
	Tags                                      []string
	Snapshot                                  map[string]any
	Created                                   time.Time
}

func (st *state) item(wsName string) map[string]any {
	return map[string]any{"id": st.ID, "name": st.Name, "created": st.Created.UnixMilli(), "sessionId": st.Session, "workspaceId": st.Workspace,
		"description": st.Description, "tags": nonNil(st.Tags), "workspaceName": wsName}
}

// states are a session's states, newest first.
func (s *Server) states(ctx context.Context, ws, session string) ([]*state, error) {
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT id, name, description, tags, snapshot, created_at FROM conversation_states WHERE workspace = ? AND conversation_id = ? ORDER BY created_at DESC, id DESC`), ws, session)
	if err != nil {
		return nil, fmt.Errorf("list states: %w", err)
	}
	defer rows.Close()
	var out []*state
	for rows.Next() {
		st := &state{Session: session, Workspace: ws}
		var desc sql.NullString
		var tags, snap string
		var created int64
		if err := rows.Scan(&st.ID, &st.Name, &desc, &tags, &snap, &created); err != nil {
			return nil, fmt.Errorf("list states: %w", err)
		}
		st.Description = desc.String
		json.Unmarshal([]byte(tags), &st.Tags)
		json.Unmarshal([]byte(snap), &st.Snapshot)
		st.Created = store.FromMicros(created)
		out = append(out, st)
	}
	return out, rows.Err()
}

// findState finds a state of the session by id or name.
func (s *Server) findState(ctx context.Context, c *registry.Call, idOrName string) (*state, error) {
	if c.SessionID == "" {
		return nil, errs.E(errs.BadRequest, "Session ID is required but not provided")
	}
	list, err := s.states(ctx, c.Workspace, c.SessionID)
	if err != nil {
		return nil, err
	}
	for _, pass := range []func(*state) bool{
		func(st *state) bool { return st.ID == idOrName },
		func(st *state) bool { return strings.EqualFold(st.Name, idOrName) },
	} {
		if i := slices.IndexFunc(list, pass); i >= 0 {
			return list[i], nil
		}
	}
	return nil, errs.E(errs.NotFound, "State '%s' not found (searched by both name and ID)", idOrName)
}

type createStateIn struct {
	Name                string   `json:"name"`
	ConversationContext string   `json:"conversationContext"`
	ActiveTask          string   `json:"activeTask"`
	ActiveFiles         []string `json:"activeFiles"`
	NextSteps           []string `json:"nextSteps"`
	Reasoning           string   `json:"reasoning"`
	TargetSessionID     string   `json:"targetSessionId"`
	Tags                []string `json:"tags"`
	Reason              string   `json:"reason"`
	IncludeSummary      bool     `json:"includeSummary"`
	IncludeFileContents bool     `json:"includeFileContents"`
	MaxFiles            *int     `json:"maxFiles"`
	MaxTraces           *int     `json:"maxTraces"`
	Description         string   `json:"description"`
}

func (s *Server) createState(ctx context.Context, c *registry.Call, in createStateIn) (result, error) {
	var bad []map[string]any
	var fields []string
	for field, v := range map[string]string{"name": in.Name, "conversationContext": in.ConversationContext, "activeTask": in.ActiveTask, "reasoning": in.Reasoning} {
		if strings.TrimSpace(v) == "" {
			bad, fields = append(bad, map[string]any{"field": field, "value": v, "requirement": "a non-empty string"}), append(fields, field)
		}
	}
	for field, v := range map[string][]string{"activeFiles": in.ActiveFiles, "nextSteps": in.NextSteps} {
		if len(v) == 0 {
			bad, fields = append(bad, map[string]any{"field": field, "value": v, "requirement": "a non-empty list"}), append(fields, field)
		}
	}
	if len(bad) > 0 {
		slices.Sort(fields)
		return result{}, errs.E(errs.BadRequest, "Validation failed: %s - each must be given (non-empty)", strings.Join(fields, ", "))
	}
	sessionID := cmpOrStr(in.TargetSessionID, c.SessionID)
	conv, err := s.findSession(ctx, c.Workspace, sessionID)
	if err != nil {
		return result{}, err
	}
	now := time.Now()
	id := "state_" + strings.ToLower(ulid.Make().String())
	w, _ := s.loadWorkspaceRow(ctx, s.st.DB(), c.Workspace)
	var wsDoc any
	if w != nil {
		wsDoc = w.document()
	}
	meta := map[string]any{"tags": nonNil(in.Tags), "reason": in.Reason, "includeSummary": in.IncludeSummary, "includeFileContents": in.IncludeFileContents, "maxFiles": in.MaxFiles, "maxTraces": in.MaxTraces}
	desc := in.ActiveTask + " - " + in.Reasoning
	snapshot := map[string]any{"id": id, "name": in.Name, "workspaceId": c.Workspace, "created": now.UnixMilli(), "sessionId": conv.ID, "timestamp": now.UnixMilli(), "description": desc,
		"context": map[string]any{"workspaceContext": wsDoc, "conversationContext": in.ConversationContext, "activeTask": in.ActiveTask, "activeFiles": in.ActiveFiles, "nextSteps": in.NextSteps, "reasoning": in.Reasoning},
		"state":   map[string]any{"workspace": wsDoc, "recentTraces": []any{}, "contextFiles": in.ActiveFiles, "metadata": meta}}
	snap, _ := json.Marshal(snapshot)
	tags, _ := json.Marshal(nonNil(in.Tags))
	if _, err := s.st.DB().ExecContext(ctx, s.st.Q(`INSERT INTO conversation_states (id, conversation_id, workspace, name, description, tags, snapshot, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		id, conv.ID, c.Workspace, in.Name, desc, string(tags), string(snap), store.Micros(now)); err != nil {
		return result{}, fmt.Errorf("create state: %w", err)
	}
	summary := fmt.Sprintf("State %q of session %q: %s. Next: %s", in.Name, conv.Title, in.ActiveTask, strings.Join(in.NextSteps, "; "))
	return ok(map[string]any{"stateId": id, "name": in.Name, "workspaceId": c.Workspace, "sessionId": conv.ID, "timestamp": now.UnixMilli(), "created": now.UnixMilli(),
		"summary": summary, "metadata": meta,
		"capturedContext": map[string]any{"summary": summary, "conversationContext": in.ConversationContext, "activeFiles": in.ActiveFiles, "nextSteps": in.NextSteps},
		"performance":     map[string]any{"filesProcessed": len(in.ActiveFiles)}},
		recommendation{Type: "workspace_update", Message: "If the workspace's goal or key files changed with this state, update them (memoryManager updateWorkspace)."}), nil
}

type listStatesIn struct {
	Page           int      `json:"page"`
	PageSize       int      `json:"pageSize"`
	Limit          int      `json:"limit"`
	Order          string   `json:"order"`
	Tags           []string `json:"tags"`
	IncludeContext bool     `json:"includeContext"`
}

// listStates lists the session's states. The original filtered by tags
// after paging (so a page could come back short or empty); here the filter
// comes first.
func (s *Server) listStates(ctx context.Context, c *registry.Call, in listStatesIn) (result, error) {
	if c.SessionID == "" {
		return result{}, errs.E(errs.BadRequest, "Session ID is required but not provided")
	}
	list, err := s.states(ctx, c.Workspace, c.SessionID)
	if err != nil {
		return result{}, err
	}
	if len(in.Tags) > 0 {
		list = slices.DeleteFunc(list, func(st *state) bool {
			return !slices.ContainsFunc(st.Tags, func(t string) bool { return slices.Contains(in.Tags, t) })
		})
	}
	if in.Order == "asc" {
		slices.Reverse(list)
	}
	total := len(list)
	size := cmpOr(in.PageSize, in.Limit)
	if size <= 0 {
		size = max(total, 1)
	}
	from := min(in.Page*size, total)
	page := list[from:min(from+size, total)]
	ws := s.wsName(ctx, c.Workspace)
	items := make([]map[string]any, 0, len(page))
	for _, st := range page {
		it := st.item(ws)
		if in.IncludeContext {
			sc, _ := st.Snapshot["context"].(map[string]any)
			it["context"] = map[string]any{"files": sc["activeFiles"], "traceCount": 0, "tags": nonNil(st.Tags), "summary": st.Description}
		}
		items = append(items, it)
	}
	pages := (total + size - 1) / size
	return ok(map[string]any{"states": items, "total": total, "page": in.Page, "pageSize": size, "totalPages": pages, "hasNextPage": in.Page+1 < pages, "hasPreviousPage": in.Page > 0}), nil
}

type loadStateIn struct {
	StateID                 string `json:"stateId"`
	ContinueExistingSession *bool  `json:"continueExistingSession"`
	SessionName             string `json:"sessionName"`
	SessionDescription      string `json:"sessionDescription"`
	RestorationGoal         string `json:"restorationGoal"`
}

func (s *Server) loadState(ctx context.Context, c *registry.Call, in loadStateIn) (result, error) {
	st, err := s.findState(ctx, c, in.StateID)
	if err != nil {
		return result{}, err
	}
	sc, _ := st.Snapshot["context"].(map[string]any)
	data := map[string]any{"stateId": st.ID, "name": st.Name, "workspaceId": st.Workspace, "sessionId": st.Session, "created": st.Created.UnixMilli()}
	if in.ContinueExistingSession != nil && !*in.ContinueExistingSession {
		next, err := s.newSession(ctx, c, cmpOrStr(in.SessionName, fmt.Sprintf("Restored from %q", st.Name)), in.SessionDescription, map[string]any{"restoredFrom": st.ID})
		if err != nil {
			return result{}, err
		}
		data["newSessionId"] = next.ID
	}
	data["restoredContext"] = map[string]any{"summary": st.Description, "associatedNotes": sc["activeFiles"], "stateCreatedAt": st.Created.UnixMilli(), "originalSessionId": st.Session,
		"continuationHistory": []any{}, "activeTask": sc["activeTask"], "activeFiles": sc["activeFiles"], "nextSteps": sc["nextSteps"], "reasoning": sc["reasoning"], "restorationGoal": in.RestorationGoal}
	return ok(data), nil
}

type updateStateIn struct {
	StateID     string   `json:"stateId"`
	Name        *string  `json:"name"`
	Description *string  `json:"description"`
	AddTags     []string `json:"addTags"`
	RemoveTags  []string `json:"removeTags"`
}

// updateState does what the original meant to (its merge failed): rename,
// re-describe, retag.
func (s *Server) updateState(ctx context.Context, c *registry.Call, in updateStateIn) (result, error) {
	st, err := s.findState(ctx, c, in.StateID)
	if err != nil {
		return result{}, err
	}
	if in.Name != nil {
		if strings.TrimSpace(*in.Name) == "" {
			return result{}, errs.Invalid("name", "must not be empty")
		}
		st.Name = *in.Name
	}
	if in.Description != nil {
		st.Description = *in.Description
	}
	for _, t := range in.AddTags {
		if !slices.Contains(st.Tags, t) {
			st.Tags = append(st.Tags, t)
		}
	}
	st.Tags = slices.DeleteFunc(st.Tags, func(t string) bool { return slices.Contains(in.RemoveTags, t) })
	tags, _ := json.Marshal(nonNil(st.Tags))
	res, err := s.st.DB().ExecContext(ctx, s.st.Q(`UPDATE conversation_states SET name = ?, description = ?, tags = ? WHERE id = ?`), st.Name, st.Description, string(tags), st.ID)
	if err != nil {
		return result{}, fmt.Errorf("update state: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return result{}, errs.E(errs.NotFound, "State '%s' not found (searched by both name and ID)", in.StateID)
	}
	return ok(map[string]any{"stateId": st.ID, "name": st.Name, "description": st.Description, "workspaceId": st.Workspace, "timestamp": time.Now().UnixMilli(), "tags": nonNil(st.Tags)}), nil
}

type loadWorkspaceIn struct {
	ID    string `json:"id"`
	Limit int    `json:"limit"`
}

// loadWorkspace (contract section 4). The original's sessions were always
// empty and its recent activity "unavailable" (paginated results read as
// arrays); here both are what they say: the workspace's newest sessions
// and its last tool calls.
func (s *Server) loadWorkspace(ctx context.Context, c *registry.Call, in loadWorkspaceIn) (result, error) {
	w, err := s.findWorkspace(ctx, c, in.ID)
	if err != nil {
		return result{}, err
	}
	limit := cmpOr(in.Limit, 3)
	w.LastAccessed = time.Now().UnixMilli()
	if _, err := s.st.DB().ExecContext(ctx, s.st.Q(`UPDATE workspaces SET last_accessed = ? WHERE id = ?`), w.LastAccessed*1000, w.ID); err != nil {
		return result{}, fmt.Errorf("load workspace: %w", err)
	}
	var files []string
	var recent []map[string]any
	if v, err := s.vault(w.Vault); err == nil {
		files, recent = workspaceFiles(v, w.RootFolder)
	}
	var workflows []string
	if list, ok := w.Context["workflows"].([]any); ok {
		for _, x := range list {
			if m, ok := x.(map[string]any); ok {
				workflows = append(workflows, fmt.Sprintf("**%v** (%v):\n%v", m["name"], m["when"], m["steps"]))
			}
		}
	}
	convs, _ := s.conv.List(ctx, w.ID, conversation.Filter{Limit: limit})
	sessions := make([]map[string]any, 0, len(convs))
	var states []map[string]any
	for _, conv := range convs {
		sessions = append(sessions, session(conv, w.Name))
		sts, _ := s.states(ctx, w.ID, conv.ID)
		for _, st := range sts {
			if len(states) < limit {
				states = append(states, st.item(w.Name))
			}
		}
	}
	prefs, _ := w.Context["preferences"].(string)
	if prefs == "" {
		prefs = "No preferences set"
	}
	data := map[string]any{
		"context":            map[string]any{"name": w.Name, "description": w.Description, "purpose": w.Context["purpose"], "rootFolder": w.RootFolder, "recentActivity": s.recentActivity(ctx, w.ID, limit)},
		"workflows":          nonNil(workflows),
		"workspaceStructure": nonNil(files),
		"recentFiles":        nonNilMaps(recent),
		"keyFiles":           keyFileMap(w),
		"preferences":        prefs,
		"sessions":           sessions,
		"states":             nonNilMaps(states),
	}
	return result{Success: true, Data: map[string]any{"data": data, "pagination": map[string]any{"sessions": map[string]any{"limit": limit, "count": len(sessions)}, "states": map[string]any{"limit": limit, "count": len(states)}},
		"workspaceContext": map[string]any{"workspaceId": w.ID, "workspacePath": []string{w.Name}, "contextDepth": "standard"}}}, nil
}

func nonNilMaps(s []map[string]any) []map[string]any {
	if s == nil {
		return []map[string]any{}
	}
	return s
}

// recentActivity is a workspace's last tool calls, as lines ("12:04
// contentManager readContent").
func (s *Server) recentActivity(ctx context.Context, ws string, limit int) []string {
	rows, err := s.st.DB().QueryContext(ctx, s.st.Q(`SELECT server, tool, started_at FROM traces WHERE workspace = ? ORDER BY started_at DESC LIMIT ?`), ws, limit)
	if err != nil {
		return []string{}
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var server, tool string
		var at int64
		if rows.Scan(&server, &tool, &at) == nil {
			out = append(out, fmt.Sprintf("%s %s %s", store.FromMicros(at).UTC().Format(time.RFC3339), server, tool))
		}
	}
	return out
}
