// Package pipelinetest calls tools of the valence family (substrate, vkb)
// and the tutor family (tn_*) through a real pipeline in tests, checking the
// family's response shape on every call.
package pipelinetest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
)

// Valence calls tools through P. Every call checks the body: success
// bodies carry "success": true, errors are {"success": false, error_code,
// error_message} with the outcome's code.
type Valence struct {
	T  testing.TB
	P  *pipeline.Pipeline
	St *store.Store
	// Workspace, when set, is sent as workspaceContext.workspaceId.
	Workspace string
	// Transport is the request's transport session (see pipeline.Request).
	Transport string
}

// In returns v calling in workspace ws.
func (v Valence) In(ws string) Valence {
	v.Workspace = ws
	return v
}

// With returns v reporting to tb (for subtests).
func (v Valence) With(tb testing.TB) Valence {
	v.T = tb
	return v
}

// Try calls tool and returns the decoded body and the error, if any.
func (v Valence) Try(tool string, args map[string]any) (map[string]any, *errs.Error) {
	v.T.Helper()
	if v.Workspace != "" {
		args["workspaceContext"] = map[string]any{"workspaceId": v.Workspace}
	}
	raw, _ := json.Marshal(args)
	o := v.P.Call(context.Background(), pipeline.Request{Tool: tool, Args: raw, Surface: "test", Transport: v.Transport})
	body, isErr := o.Body()
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		v.T.Fatalf("%s: body is not JSON: %s", tool, body)
	}
	if o.Tool != nil && o.Tool.Family == registry.Tutor {
		// ADR-012: a result is the tool's own; an error is ErrorResponse.
		if isErr && (out["code"] != string(o.Err.Code) || out["message"] == nil || out["requestId"] != o.RequestID) {
			v.T.Fatalf("%s: error body not an ADR-012 ErrorResponse: %s", tool, body)
		}
		if isErr {
			return out, o.Err
		}
		return out, nil
	}
	if isErr {
		if out["success"] != false || out["error_code"] != string(o.Err.Code) || out["error_message"] == nil {
			v.T.Fatalf("%s: error body not in the valence shape: %s", tool, body)
		}
		return out, o.Err
	}
	if out["success"] != true {
		v.T.Fatalf("%s: success body without success=true: %s", tool, body)
	}
	return out, nil
}

// Call calls tool and fails the test on an error.
func (v Valence) Call(tool string, args map[string]any) map[string]any {
	v.T.Helper()
	out, err := v.Try(tool, args)
	if err != nil {
		v.T.Fatalf("%s: %v", tool, err)
	}
	return out
}

// Count returns the number of rows of table in St.
func (v Valence) Count(table string) int {
	v.T.Helper()
	var n int
	if err := v.St.DB().QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		v.T.Fatal(err)
	}
	return n
}

// Obj and Arr assert JSON values' kinds.
func Obj(v any) map[string]any { return v.(map[string]any) }

// Arr asserts that v is a JSON array.
func Arr(v any) []any { return v.([]any) }

// Sessions is an in-memory [pipeline.Sessions] for tests: session id to
// workspace and owner, safe for concurrent use.
type Sessions struct {
	mu sync.Mutex
	m  map[string][2]string
}

// NewSessions returns an empty [Sessions].
func NewSessions() *Sessions { return &Sessions{m: map[string][2]string{}} }

// Lookup implements [pipeline.Sessions].
func (s *Sessions) Lookup(_ context.Context, id string) (string, string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[id]
	return r[0], r[1], ok, nil
}

// Ensure implements [pipeline.Sessions].
func (s *Sessions) Ensure(_ context.Context, id, ws, owner, _ string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if got, ok := s.m[id]; ok {
		return got[0], got[1], nil
	}
	s.m[id] = [2]string{ws, owner}
	return ws, owner, nil
}

// Len reports how many sessions are stored.
func (s *Sessions) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
