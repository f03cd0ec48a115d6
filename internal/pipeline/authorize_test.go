package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
)

type whoKey struct{}

// TestSessionsAreTheirUsers: one transport used by two users gives each a
// conversation of their own, a session named by another user is refused
// (FORBIDDEN as the call's session, NOT_FOUND as a tool's session_id
// argument), and admins reach every session.
func TestSessionsAreTheirUsers(t *testing.T) {
	reg := registry.New()
	err := reg.Add(registry.Tool{
		ID:          registry.ID{Toolbox: registry.BuiltinToolbox, Server: "test", Tool: "get"},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"session_id":{"type":"string"}}}`),
		Source:      registry.Local, Family: registry.Valence,
		Handler: func(context.Context, *registry.Call) (any, error) { return map[string]any{"success": true}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	p := pipeline.New(pipeline.Options{Registry: reg, Sessions: pipelinetest.NewSessions(),
		Principal: func(ctx context.Context) (principal.Principal, bool) {
			u, ok := ctx.Value(whoKey{}).(principal.Principal)
			return u, ok
		}})
	alice := context.WithValue(context.Background(), whoKey{}, principal.Principal{ID: "a", Name: "alice", Role: principal.Member})
	bob := context.WithValue(context.Background(), whoKey{}, principal.Principal{ID: "b", Name: "bob", Role: principal.Member})
	admin := context.WithValue(context.Background(), whoKey{}, principal.Principal{ID: "r", Name: "root", Role: principal.Admin})
	call := func(ctx context.Context, args string) *pipeline.Outcome {
		return p.Call(ctx, pipeline.Request{Tool: "get", Args: json.RawMessage(args), Transport: "shared"})
	}
	a, b := call(alice, `{}`), call(bob, `{}`)
	if a.Err != nil || b.Err != nil || a.SessionID == b.SessionID {
		t.Fatalf("one transport, two users: %v %v, sessions %s and %s", a.Err, b.Err, a.SessionID, b.SessionID)
	}
	if again := call(alice, `{}`); again.SessionID != a.SessionID {
		t.Fatalf("alice's next call: session %s, want %s", again.SessionID, a.SessionID)
	}
	for _, tc := range []struct {
		ctx  context.Context
		args string
		want errs.Code
	}{
		{bob, `{"context":{"sessionId":"` + a.SessionID + `"}}`, errs.Forbidden},
		{bob, `{"sessionId":"` + a.SessionID + `"}`, errs.Forbidden},
		{bob, `{"session_id":"` + a.SessionID + `"}`, errs.NotFound},
		{alice, `{"session_id":"` + a.SessionID + `"}`, ""},
		{admin, `{"context":{"sessionId":"` + a.SessionID + `"}}`, ""},
		{admin, `{"session_id":"` + b.SessionID + `"}`, ""},
	} {
		o := call(tc.ctx, tc.args)
		var got errs.Code
		if o.Err != nil {
			got = o.Err.Code
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q (%v)", tc.args, got, tc.want, o.Err)
		}
	}
}
