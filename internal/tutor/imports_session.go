package tutor

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/nexus-mcp/nexus/internal/errs"
)

// importSession restores a session snapshot into workspace through
// ImportSession. A session of the snapshot's id that is already in the
// workspace with the same content is Unchanged (importing a snapshot twice
// changes nothing); with other content, or in another workspace, it is a
// CONFLICT: a snapshot never replaces a session.
func (s *Server) importSession(ctx context.Context, workspace string, snap Snapshot, run *fileRun) error {
	id := snap.Session.SessionID
	ws, found, err := s.conv.Workspace(ctx, id)
	if err != nil {
		return err
	}
	switch {
	case found && ws != workspace:
		return errs.E(errs.Conflict, "session %s exists in another workspace; a snapshot is restored once", id)
	case found:
		cur, err := s.Export(ctx, workspace, id)
		if err != nil {
			return err
		}
		if !sameSnapshot(cur, snap) {
			return errs.E(errs.Conflict, "session %s exists in workspace %s with other content; a snapshot never replaces a session", id, workspace)
		}
		run.count(unchanged)
	default:
		if err := s.ImportSession(ctx, workspace, snap); err != nil {
			return err
		}
		run.count(created)
	}
	run.rowDone()
	return nil
}

// sameSnapshot compares two snapshots but for when they were exported,
// through their JSON (times compare by instant, maps by content).
func sameSnapshot(a, b Snapshot) bool {
	a.ExportedAt = b.ExportedAt
	norm := func(s Snapshot) any {
		raw, err := json.Marshal(s)
		if err != nil {
			return fmt.Sprint(err)
		}
		var v any
		_ = json.Unmarshal(raw, &v)
		return v
	}
	return reflect.DeepEqual(norm(a), norm(b))
}
