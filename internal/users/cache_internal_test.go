package users

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestAuthenticationCache: a server trusts a token it checked for CacheFor;
// a revocation by another process (another Users) takes effect after that,
// one by this process at once.
func TestAuthenticationCache(t *testing.T) {
	st := storetest.OpenTestSQLite(t)
	ctx := context.Background()
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	server := New(st)
	server.now = func() time.Time { return clock }
	other := New(st) // the CLI, another process
	_, tok, err := other.Add(ctx, "alice", Free, principal.Member, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.Authenticate(ctx, tok); err != nil {
		t.Fatal(err)
	}
	toks, _ := other.Tokens(ctx, "alice")
	if err := other.Revoke(ctx, toks[0].ID); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(CacheFor - time.Second)
	if _, err := server.Authenticate(ctx, tok); err != nil {
		t.Fatalf("within CacheFor of its check: %v", err)
	}
	clock = clock.Add(2 * time.Second)
	if _, err := server.Authenticate(ctx, tok); !errors.Is(err, ErrRevoked) {
		t.Fatalf("after CacheFor: %v", err)
	}
	// A change made by the server itself takes effect at once.
	tok2, _, _ := server.AddToken(ctx, "alice", "")
	if _, err := server.Authenticate(ctx, tok2); err != nil {
		t.Fatal(err)
	}
	yes := true
	if _, err := server.Set(ctx, "alice", Change{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Authenticate(ctx, tok2); !errors.Is(err, ErrDisabled) {
		t.Fatalf("disabled by this server: %v", err)
	}
}

// TestForgetAndOnChange: a change this process makes calls the OnChange
// functions (serve publishes them to the other replicas), and Forget
// (another replica's change) drops what the cache trusted at once.
func TestForgetAndOnChange(t *testing.T) {
	st := storetest.OpenTestSQLite(t)
	ctx := context.Background()
	server, other := New(st), New(st)
	changes := 0
	other.OnChange(func(context.Context) { changes++ })
	_, tok, err := other.Add(ctx, "alice", Free, principal.Member, "")
	if err != nil {
		t.Fatal(err)
	}
	if changes != 0 {
		t.Errorf("adding a user is no change others cache: %d calls", changes)
	}
	if _, err := server.Authenticate(ctx, tok); err != nil {
		t.Fatal(err)
	}
	toks, _ := other.Tokens(ctx, "alice")
	if err := other.Revoke(ctx, toks[0].ID); err != nil {
		t.Fatal(err)
	}
	if changes != 1 {
		t.Errorf("a revocation called OnChange %d times, want 1", changes)
	}
	if _, err := server.Authenticate(ctx, tok); err != nil {
		t.Fatalf("cached, before Forget: %v", err)
	}
	server.Forget()
	if _, err := server.Authenticate(ctx, tok); !errors.Is(err, ErrRevoked) {
		t.Fatalf("after Forget: %v", err)
	}
	yes := true
	if _, err := other.Set(ctx, "alice", Change{Disabled: &yes}); err != nil || changes != 2 {
		t.Errorf("Set: %v, OnChange called %d times, want 2", err, changes)
	}
}
