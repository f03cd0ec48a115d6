package vault

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// memoryManager's workspaces (contract section 4) are Nexus workspaces: a
// row of the workspaces table, whose owner and members decide who uses it
// as for every other workspace, with the memoryManager's fields beside it
// (migration 030): its name, description, vault and root folder, and the
// rest of its document (purpose, goal, workflows, key files, preferences
// and whatever updateWorkspace sets) as JSON.

// workspace is a memoryManager workspace as the original described it.
type workspace struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	RootFolder   string         `json:"rootFolder"`
	Vault        string         `json:"vault"`
	Created      int64          `json:"created"`
	LastAccessed int64          `json:"lastAccessed"`
	IsActive     bool           `json:"isActive"`
	Context      map[string]any `json:"context"`
	// Extra holds the other fields updateWorkspace may set
	// (relatedFolders, projectPlan, checkpoints...).
	Extra map[string]any `json:"-"`
}

// document is w as one JSON object (its fields and Extra's).
func (w *workspace) document() map[string]any {
	b, _ := json.Marshal(w)
	var m map[string]any
	json.Unmarshal(b, &m)
	for k, v := range w.Extra {
		m[k] = v
	}
	return m
}

// fromDocument reads w back from its document.
func fromDocument(m map[string]any) (*workspace, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	w := &workspace{}
	if err := json.Unmarshal(b, w); err != nil {
		return nil, err
	}
	w.Extra = map[string]any{}
	for k, v := range m {
		switch k {
		case "id", "name", "description", "rootFolder", "vault", "created", "lastAccessed", "isActive", "context":
		default:
			w.Extra[k] = v
		}
	}
	return w, nil
}

// Workspaces decides who may use a workspace (the access package's
// Authorizer).
type Workspaces interface {
	// Workspace is nil if who may act in workspace ws.
	Workspace(ctx context.Context, who principal.Principal, ws string) error
	// Forget drops what it knows of workspaces (one was created).
	Forget()
}

// loadWorkspaceRow reads the workspace of id, or nil.
func (s *Server) loadWorkspaceRow(ctx context.Context, q querier, id string) (*workspace, error) {
	var name, desc, vault, root, doc sql.NullString
	var created int64
	var last sql.NullInt64
	err := q.QueryRowContext(ctx, s.st.Q(`SELECT name, description, vault, root_folder, context, created_at, last_accessed FROM workspaces WHERE id = ?`), id).
		Scan(&name, &desc, &vault, &root, &doc, &created, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read workspace: %w", err)
	}
	if !name.Valid { // a Nexus workspace memoryManager never described
		if id != defaultWorkspace {
			return &workspace{ID: id, Name: id, RootFolder: "/", IsActive: true, Created: created / 1000, Context: map[string]any{}}, nil
		}
		return &workspace{ID: id, Name: "Default Workspace", RootFolder: "/", IsActive: true, Created: created / 1000, Context: map[string]any{}}, nil
	}
	m := map[string]any{}
	if doc.Valid {
		json.Unmarshal([]byte(doc.String), &m)
	}
	w, err := fromDocument(m)
	if err != nil {
		return nil, err
	}
	w.ID, w.Name, w.Description, w.Vault, w.RootFolder, w.IsActive = id, name.String, desc.String, vault.String, root.String, true
	w.Created = created / 1000
	if last.Valid {
		w.LastAccessed = last.Int64 / 1000
	}
	if w.Context == nil {
		w.Context = map[string]any{}
	}
	return w, nil
}

// defaultWorkspace is the workspace of calls that name none.
const defaultWorkspace = "default"

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// saveWorkspace writes w (its row exists).
func (s *Server) saveWorkspace(ctx context.Context, w *workspace) error {
	doc, err := json.Marshal(w.document())
	if err != nil {
		return errs.Invalid("newValue", "cannot be stored: %v", err)
	}
	_, err = s.st.DB().ExecContext(ctx, s.st.Q(`UPDATE workspaces SET name = ?, description = ?, vault = ?, root_folder = ?, context = ?, last_accessed = ? WHERE id = ?`),
		w.Name, nullStr(w.Description), nullStr(w.Vault), w.RootFolder, string(doc), w.LastAccessed*1000, w.ID)
	if err != nil {
		return fmt.Errorf("save workspace: %w", err)
	}
	return nil
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// findWorkspace finds a workspace the caller may use by id, or else by
// name (exactly, without regard to case), the original's "ID or name".
func (s *Server) findWorkspace(ctx context.Context, c *registry.Call, idOrName string) (*workspace, error) {
	notFound := errs.E(errs.NotFound, "Workspace '%s' not found (searched by both name and ID)", idOrName)
	if w, err := s.loadWorkspaceRow(ctx, s.st.DB(), idOrName); err != nil {
		return nil, err
	} else if w != nil {
		if s.mayUse(ctx, c, w.ID) != nil {
			return nil, notFound
		}
		return w, nil
	}
	for _, w := range s.workspaces(ctx, c) {
		if strings.EqualFold(w.Name, idOrName) {
			return w, nil
		}
	}
	return nil, notFound
}

// mayUse is nil if the caller may use workspace ws.
func (s *Server) mayUse(ctx context.Context, c *registry.Call, ws string) error {
	if s.access == nil {
		return nil
	}
	return s.access.Workspace(ctx, c.User, ws)
}

// workspaces are the memoryManager workspaces the caller may use.
func (s *Server) workspaces(ctx context.Context, c *registry.Call) []*workspace {
	rows, err := s.st.DB().QueryContext(ctx, `SELECT id FROM workspaces WHERE name IS NOT NULL`)
	if err != nil {
		return nil
	}
	var ids []string
	for rows.Next() {
		var id string
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	rows.Close()
	var out []*workspace
	for _, id := range ids {
		if s.mayUse(ctx, c, id) != nil {
			continue
		}
		if w, err := s.loadWorkspaceRow(ctx, s.st.DB(), id); err == nil && w != nil {
			out = append(out, w)
		}
	}
	return out
}

type workflow struct {
	Name  string `json:"name"`
	When  string `json:"when"`
	Steps string `json:"steps"`
}

type createWorkspaceIn struct {
	Vault               string     `json:"vault"`
	Name                string     `json:"name"`
	Description         string     `json:"description"`
	RootFolder          string     `json:"rootFolder"`
	Purpose             string     `json:"purpose"`
	CurrentGoal         string     `json:"currentGoal"`
	Workflows           []workflow `json:"workflows"`
	KeyFiles            []string   `json:"keyFiles"`
	Preferences         string     `json:"preferences"`
	DedicatedAgentID    string     `json:"dedicatedAgentId"`
	RelatedFolders      []string   `json:"relatedFolders"`
	RelatedFiles        []string   `json:"relatedFiles"`
	KeyFileInstructions string     `json:"keyFileInstructions"`
}

// keyNames are the notes of a workspace's root folder that are its key
// files without being named (the original's auto-detection).
var keyNames = []string{"index.md", "readme.md", "summary.md", "moc.md", "overview.md"}

func (s *Server) createWorkspace(ctx context.Context, c *registry.Call, in createWorkspaceIn) (result, error) {
	var bad []string
	for field, v := range map[string]string{"name": in.Name, "rootFolder": in.RootFolder, "purpose": in.Purpose, "currentGoal": in.CurrentGoal} {
		if strings.TrimSpace(v) == "" {
			bad = append(bad, field+": "+field+" is required and must be a non-empty string")
		}
	}
	if len(in.Workflows) == 0 {
		bad = append(bad, "workflows: at least one workflow {name, when, steps} is required")
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return result{}, errs.E(errs.BadRequest, "Validation failed: %s", strings.Join(bad, ", "))
	}
	v, err := s.vaultFor(ctx, c, in.Vault)
	if err != nil {
		return result{}, err
	}
	root, err := Clean(in.RootFolder, true)
	if err != nil {
		return result{}, errs.E(errs.BadRequest, "%v", err)
	}
	if st, err := v.Stat(cmpOrStr(root, ".")); err != nil || !st.IsDir() {
		if _, err := v.Mkdir(root); err != nil {
			return result{}, prefixed("Failed to create the workspace's root folder", err)
		}
	}
	keyFiles := slices.Clone(in.KeyFiles)
	for _, k := range s.detectKeyFiles(v, root) {
		if !slices.Contains(keyFiles, k) {
			keyFiles = append(keyFiles, k)
		}
	}
	now := time.Now()
	w := &workspace{ID: "ws_" + strings.ToLower(ulid.Make().String()), Name: strings.TrimSpace(in.Name), Description: in.Description,
		RootFolder: "/" + root, Vault: v.Name, Created: now.UnixMilli(), LastAccessed: now.UnixMilli(), IsActive: true,
		Context: map[string]any{"purpose": in.Purpose, "currentGoal": in.CurrentGoal, "workflows": in.Workflows, "keyFiles": nonNil(keyFiles), "preferences": in.Preferences},
		Extra:   map[string]any{}}
	if in.DedicatedAgentID != "" {
		w.Context["dedicatedAgent"] = map[string]any{"agentId": in.DedicatedAgentID, "agentName": in.DedicatedAgentID}
	}
	for k, val := range map[string]any{"relatedFolders": in.RelatedFolders, "relatedFiles": in.RelatedFiles, "keyFileInstructions": in.KeyFileInstructions} {
		if !reflect.ValueOf(val).IsZero() {
			w.Extra[k] = val
		}
	}
	doc, _ := json.Marshal(w.document())
	owner := any(nil)
	if c.User.ID != "" {
		owner = c.User.ID
	}
	if _, err := s.st.DB().ExecContext(ctx, s.st.Q(`INSERT INTO workspaces (id, owner_id, created_at, name, description, vault, root_folder, context, last_accessed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		w.ID, owner, store.Micros(now), w.Name, nullStr(w.Description), w.Vault, w.RootFolder, string(doc), w.LastAccessed*1000); err != nil {
		return result{}, fmt.Errorf("create workspace: %w", err)
	}
	if s.access != nil {
		s.access.Forget()
	}
	return ok(map[string]any{"workspaceId": w.ID, "workspace": w.document()}), nil
}

// detectKeyFiles are the key notes among root's direct children.
func (s *Server) detectKeyFiles(v *Vault, root string) []string {
	var out []string
	v.walk(root, 0, func(p string, d fs.DirEntry) {
		if d.IsDir() || !isNote(p) {
			return
		}
		if slices.Contains(keyNames, strings.ToLower(d.Name())) {
			out = append(out, p)
			return
		}
		if l := s.libs[v]; l != nil {
			if doc, ok := l.ix.Get(p); ok && strings.EqualFold(doc.Properties["key"], "true") {
				out = append(out, p)
			}
		}
	})
	slices.Sort(out)
	return out
}

type listWorkspacesIn struct {
	SortBy string `json:"sortBy"`
	Order  string `json:"order"`
	Limit  int    `json:"limit"`
}

func (s *Server) listWorkspaces(ctx context.Context, c *registry.Call, in listWorkspacesIn) (result, error) {
	ws := s.workspaces(ctx, c)
	key := func(w *workspace) string {
		switch in.SortBy {
		case "name":
			return strings.ToLower(w.Name)
		case "created":
			return fmt.Sprintf("%020d", w.Created)
		}
		return fmt.Sprintf("%020d", w.LastAccessed)
	}
	slices.SortStableFunc(ws, func(a, b *workspace) int {
		if in.Order == "asc" {
			return strings.Compare(key(a), key(b))
		}
		return strings.Compare(key(b), key(a))
	})
	if in.Limit > 0 && len(ws) > in.Limit {
		ws = ws[:in.Limit]
	}
	items := make([]map[string]any, 0, len(ws))
	for _, w := range ws {
		items = append(items, map[string]any{"id": w.ID, "name": w.Name, "description": w.Description, "rootFolder": w.RootFolder, "lastAccessed": w.LastAccessed, "status": "active"})
	}
	return ok(map[string]any{"workspaces": items, "performance": map[string]any{"totalWorkspaces": len(items)}}), nil
}

type updateWorkspaceIn struct {
	WorkspaceID string          `json:"workspaceId"`
	FieldPath   string          `json:"fieldPath"`
	NewValue    json.RawMessage `json:"newValue"`
}

var (
	fieldPathRe  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_]*(?:\.[a-zA-Z][a-zA-Z0-9_]*|\[[0-9]+\])*$`)
	fieldSegment = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9_]*|\[[0-9]+\]`)
	topFields    = []string{"name", "description", "rootFolder", "relatedFolders", "relatedFiles", "associatedNotes", "keyFileInstructions", "preferences", "projectPlan", "context", "activityHistory", "checkpoints", "completionStatus"}
	contextField = []string{"purpose", "currentGoal", "status", "workflows", "keyFiles", "preferences", "agents"}
)

// updateWorkspace sets one field of a workspace's document. The original,
// in its SQLite store, kept only name, description, rootFolder, isActive and
// context and dropped the other allowed fields without a word; here every
// allowed field is kept.
func (s *Server) updateWorkspace(ctx context.Context, c *registry.Call, in updateWorkspaceIn) (result, error) {
	if !fieldPathRe.MatchString(in.FieldPath) {
		return result{}, errs.E(errs.BadRequest, "Invalid field path: %q is not a dot or bracket path (name, context.purpose, context.workflows[0].steps)", in.FieldPath)
	}
	segs := fieldSegment.FindAllString(in.FieldPath, -1)
	if !slices.Contains(topFields, segs[0]) {
		return result{}, errs.E(errs.BadRequest, "Invalid field path: %q cannot be updated (fields: %s)", segs[0], strings.Join(topFields, ", "))
	}
	if segs[0] == "context" && len(segs) > 1 && !slices.Contains(contextField, segs[1]) {
		return result{}, errs.E(errs.BadRequest, "Invalid field path: context.%s cannot be updated (context fields: %s)", segs[1], strings.Join(contextField, ", "))
	}
	var newValue any
	if err := json.Unmarshal(in.NewValue, &newValue); err != nil {
		return result{}, errs.Invalid("newValue", "is not JSON: %v", err)
	}
	w, err := s.findWorkspace(ctx, c, in.WorkspaceID)
	if err != nil {
		return result{}, err
	}
	if segs[0] == "rootFolder" {
		str, isStr := newValue.(string)
		root, err := Clean(str, true)
		if !isStr || err != nil {
			return result{}, errs.E(errs.BadRequest, "Error updating workspace: rootFolder must be a folder path in the vault: %v", err)
		}
		newValue = "/" + root
	}
	doc := w.document()
	old, err := setPath(doc, segs, newValue)
	if err != nil {
		return result{}, errs.E(errs.BadRequest, "Error updating workspace: %v", err)
	}
	if reflect.DeepEqual(old, newValue) {
		return ok(map[string]any{"workspaceId": w.ID, "updated": false, "fieldPath": in.FieldPath, "oldValue": old, "newValue": newValue, "workspace": w.document()}), nil
	}
	nw, err := fromDocument(doc)
	if err != nil {
		return result{}, errs.E(errs.BadRequest, "Error updating workspace: %v", err)
	}
	nw.ID, nw.Created, nw.LastAccessed, nw.IsActive = w.ID, w.Created, time.Now().UnixMilli(), true
	if strings.TrimSpace(nw.Name) == "" {
		return result{}, errs.E(errs.BadRequest, "Error updating workspace: name must be a non-empty string")
	}
	if err := s.saveWorkspace(ctx, nw); err != nil {
		return result{}, err
	}
	return ok(map[string]any{"workspaceId": w.ID, "updated": true, "fieldPath": in.FieldPath, "oldValue": old, "newValue": newValue, "workspace": nw.document()}), nil
}

// setPath sets doc's value at the path segs (names and [i]), creating the
// containers along it, and returns the old value.
func setPath(doc map[string]any, segs []string, v any) (old any, err error) {
	var cur any = doc
	for i, seg := range segs {
		last := i == len(segs)-1
		if strings.HasPrefix(seg, "[") {
			idx, _ := strconv.Atoi(seg[1 : len(seg)-1])
			return nil, fmt.Errorf("%s: indexes are read from the field before them; set the whole list instead (index %d)", strings.Join(segs[:i+1], ""), idx)
		}
		m, isMap := cur.(map[string]any)
		if !isMap {
			return nil, fmt.Errorf("%s is not an object", strings.Join(segs[:i], "."))
		}
		if last {
			old = m[seg]
			m[seg] = v
			return old, nil
		}
		next, exists := m[seg]
		if !exists || next == nil {
			next = map[string]any{}
			m[seg] = next
		}
		cur = next
	}
	return nil, nil
}

// workspaceFiles are the files under a workspace's root folder, relative
// to it, sorted; and the 5 most recently modified.
func workspaceFiles(v *Vault, root string) (all []string, recent []map[string]any) {
	root = strings.TrimPrefix(root, "/")
	type mod struct {
		p string
		t time.Time
	}
	var mods []mod
	v.walk(root, -1, func(p string, d fs.DirEntry) {
		if d.IsDir() {
			return
		}
		rel := p
		if root != "" {
			rel = strings.TrimPrefix(p, root+"/")
		}
		all = append(all, rel)
		if info, err := d.Info(); err == nil {
			mods = append(mods, mod{p, info.ModTime()})
		}
	})
	slices.Sort(all)
	slices.SortFunc(mods, func(a, b mod) int { return b.t.Compare(a.t) })
	for _, m := range mods[:min(5, len(mods))] {
		recent = append(recent, map[string]any{"path": m.p, "modified": m.t.UnixMilli()})
	}
	return all, recent
}

// keyFileMap is {<basename>: path} of a workspace's key files.
func keyFileMap(w *workspace) map[string]string {
	out := map[string]string{}
	if list, ok := w.Context["keyFiles"].([]any); ok {
		for _, k := range list {
			if p, ok := k.(string); ok {
				out[path.Base(p)] = p
			}
		}
	}
	return out
}
