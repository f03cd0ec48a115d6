package tutor

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

type whoKey struct{}

// TestUserTools: quota, subscription and preferences are the calling
// user's (the pipeline's principal), on both stores.
func TestUserTools(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		reg := registry.New()
		conv := conversation.New(st)
		s := New(st, conv, Options{CursorKey: []byte("k")})
		if err := registry.AddAll(reg, registry.BuiltinToolbox, ServerName, s.userTools()...); err != nil {
			t.Fatal(err)
		}
		p := pipeline.New(pipeline.Options{Registry: reg, Sessions: conv, Principal: func(ctx context.Context) (principal.Principal, bool) {
			u, ok := ctx.Value(whoKey{}).(principal.Principal)
			return u, ok
		}})
		alice := principal.Principal{ID: "u-alice", Name: "alice", Tier: "free", Role: principal.Member}
		bob := principal.Principal{ID: "u-bob", Name: "bob", Tier: "anonymous", Role: principal.Member}
		call := func(who principal.Principal, tool string, args string) (map[string]any, *errs.Error) {
			ctx := context.WithValue(context.Background(), whoKey{}, who)
			o := p.Call(ctx, pipeline.Request{Tool: tool, Args: []byte(args), Surface: "test"})
			body, _ := o.Body()
			out := map[string]any{}
			if err := json.Unmarshal(body, &out); err != nil {
				t.Fatalf("%s: %s", tool, body)
			}
			return out, o.Err
		}
		for range 3 {
			if _, err := s.quotas.Admit(context.Background(), alice.ID, quota.Free, s.now()); err != nil {
				t.Fatal(err)
			}
		}
		q, e := call(alice, "tn_user_quota", `{}`)
		if e != nil || q["user"] != "alice" || q["tier"] != "free" || q["current"] != 3.0 || q["max"] != 100.0 || q["remaining"] != 97.0 || q["byokCounted"] != false {
			t.Fatalf("alice's quota: %v %v", q, e)
		}
		if q, _ := call(bob, "tn_user_quota", `{}`); q["current"] != 0.0 || q["max"] != 10.0 {
			t.Fatalf("bob's quota: %v", q)
		}
		if sub, _ := call(alice, "tn_user_subscription", `{}`); sub["tier"] != "free" || sub["dailyPromptLimit"] != 100.0 || sub["status"] != "active" {
			t.Fatalf("subscription: %v", sub)
		}
		// Preferences: partial updates, "" clears, per user.
		if g, _ := call(alice, "tn_user_preferences_get", `{}`); len(g["preferences"].(map[string]any)) != 0 {
			t.Fatalf("no preferences yet: %v", g)
		}
		call(alice, "tn_user_preferences_set", `{"theme":"dark","homeInstitution":"Langara College","voice":{"enabled":true,"speed":1.25}}`)
		call(alice, "tn_user_preferences_set", `{"targetInstitution":"sfu","theme":""}`)
		g, _ := call(alice, "tn_user_preferences_get", `{}`)
		prefs := g["preferences"].(map[string]any)
		if prefs["theme"] != nil || prefs["homeInstitution"] != "Langara College" || prefs["targetInstitution"] != "sfu" || prefs["voice"].(map[string]any)["speed"] != 1.25 {
			t.Fatalf("alice's preferences: %v", g)
		}
		if g, _ := call(bob, "tn_user_preferences_get", `{}`); len(g["preferences"].(map[string]any)) != 0 {
			t.Fatalf("bob sees preferences: %v", g)
		}
		for _, tc := range []struct{ args, field string }{
			{`{"theme":"neon"}`, "theme"},
			{`{"voice":{"enabled":true,"speed":9}}`, "voice.speed"},
			{`{"homeInstitution":"Hogwarts"}`, "homeInstitution"},
			{`{"language":"not a tag"}`, "language"},
			{`{"colour":"red"}`, "colour"},
			{`{"toolApproval":"sometimes"}`, "toolApproval"},
		} {
			if _, e := call(alice, "tn_user_preferences_set", tc.args); e == nil || e.Code != errs.BadRequest || !strings.Contains(e.Field+" "+e.Message, tc.field) {
				t.Errorf("set %s: %v, want BAD_REQUEST naming %s", tc.args, e, tc.field)
			}
		}
		if g, _ := call(alice, "tn_user_preferences_get", `{}`); g["preferences"].(map[string]any)["targetInstitution"] != "sfu" {
			t.Fatalf("a refused update changed the preferences: %v", g)
		}
		// The chat's tool approval (issue 24): read by the chat through
		// ToolApproval; "" clears it (the server's default applies).
		ctx := context.Background()
		if mode, err := s.ToolApproval(ctx, alice.ID); err != nil || mode != "" {
			t.Fatalf("no tool approval set: %q %v", mode, err)
		}
		call(alice, "tn_user_preferences_set", `{"toolApproval":"writes"}`)
		if mode, err := s.ToolApproval(ctx, alice.ID); err != nil || mode != "writes" {
			t.Fatalf("tool approval: %q %v", mode, err)
		}
		if mode, _ := s.ToolApproval(ctx, bob.ID); mode != "" {
			t.Fatalf("bob's tool approval: %q", mode)
		}
		if g, _ := call(alice, "tn_user_preferences_get", `{}`); g["preferences"].(map[string]any)["toolApproval"] != "writes" {
			t.Fatalf("preferences: %v", g)
		}
		call(alice, "tn_user_preferences_set", `{"toolApproval":""}`)
		if mode, err := s.ToolApproval(ctx, alice.ID); err != nil || mode != "" {
			t.Fatalf("cleared tool approval: %q %v", mode, err)
		}
	})
}
