package users_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/users"
)

func TestUsersAndTokens(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		u := users.New(st)
		alice, tok, err := u.Add(ctx, "alice", users.Free, principal.Member, "laptop")
		if err != nil {
			t.Fatal(err)
		}
		if !users.WellFormed(tok) || alice.Tier != users.Free || alice.Role != principal.Member {
			t.Fatalf("add: %+v %q", alice, tok)
		}
		// The token's text is nowhere in the store.
		var n int
		if err := st.DB().QueryRow(st.Q(`SELECT COUNT(*) FROM user_tokens WHERE hash = ? OR label = ? OR id = ?`), tok, tok, tok).Scan(&n); err != nil || n != 0 {
			t.Fatalf("token text stored: %d %v", n, err)
		}
		got, err := u.Authenticate(ctx, tok)
		if err != nil || got.ID != alice.ID {
			t.Fatalf("authenticate: %+v %v", got, err)
		}
		if _, _, err := u.Add(ctx, "alice", users.Paid, principal.Admin, ""); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("second alice: %v", err)
		}
		// A second token; revoking one leaves the other.
		tok2, rec2, err := u.AddToken(ctx, "alice", "phone")
		if err != nil || tok2 == tok {
			t.Fatalf("second token: %v", err)
		}
		if err := u.Revoke(ctx, rec2.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Authenticate(ctx, tok2); !errors.Is(err, users.ErrRevoked) {
			t.Fatalf("revoked token: %v", err)
		}
		if _, err := u.Authenticate(ctx, tok); err != nil {
			t.Fatalf("the other token after a revocation: %v", err)
		}
		toks, err := u.Tokens(ctx, "alice")
		if err != nil || len(toks) != 2 || toks[0].RevokedAt == nil || toks[1].LastUsedAt == nil {
			t.Fatalf("tokens: %+v %v", toks, err)
		}
		// Disabled users cannot authenticate; set changes tier and role.
		yes := true
		paid, admin := users.Paid, principal.Admin
		if _, err := u.Set(ctx, "alice", users.Change{Disabled: &yes}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Authenticate(ctx, tok); !errors.Is(err, users.ErrDisabled) {
			t.Fatalf("disabled user: %v", err)
		}
		if s, err := u.Set(ctx, "alice", users.Change{Tier: &paid, Role: &admin}); err != nil || s.Tier != paid || s.Role != admin || !s.Disabled {
			t.Fatalf("set: %+v %v", s, err)
		}
		// Bad input names the field and writes nothing.
		bad := "gold"
		for _, tc := range []struct {
			err   error
			field string
		}{
			{func() error { _, _, err := u.Add(ctx, "Bob Smith", users.Free, principal.Member, ""); return err }(), "name"},
			{func() error { _, _, err := u.Add(ctx, "bob", "gold", principal.Member, ""); return err }(), "tier"},
			{func() error { _, _, err := u.Add(ctx, "bob", users.Free, "root", ""); return err }(), "role"},
			{func() error { _, err := u.Set(ctx, "alice", users.Change{Tier: &bad}); return err }(), "tier"},
		} {
			var e *errs.Error
			if !errors.As(tc.err, &e) || e.Code != errs.BadRequest || !strings.Contains(tc.err.Error(), tc.field) {
				t.Errorf("want BAD_REQUEST naming %s, got %v", tc.field, tc.err)
			}
		}
		if l, _ := u.List(ctx); len(l) != 1 {
			t.Fatalf("bad input wrote a user: %+v", l)
		}
		if _, err := u.Set(ctx, "nobody", users.Change{}); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("set of an unknown user: %v", err)
		}
		if err := u.Revoke(ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV"); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("revoke of an unknown token: %v", err)
		}
		// Malformed, unknown and foreign tokens are all "unknown".
		for _, text := range []string{"", "nxs_", tok + "x", "Bearer " + tok, strings.ToUpper(tok), "nxs_" + strings.Repeat("A", 43)} {
			if _, err := u.Authenticate(ctx, text); !errors.Is(err, users.ErrUnknownToken) {
				t.Errorf("Authenticate(%q): %v", text, err)
			}
		}
	})
}

func FuzzWellFormed(f *testing.F) {
	f.Add("nxs_" + strings.Repeat("A", 43))
	f.Add("")
	f.Add("nxs_!!!")
	f.Fuzz(func(t *testing.T, s string) {
		if users.WellFormed(s) && (!strings.HasPrefix(s, users.TokenPrefix) || len(s) != 47) {
			t.Fatalf("%q is well formed", s)
		}
		if users.HashToken(s) == users.HashToken(s+"x") {
			t.Fatal("hash collision")
		}
	})
}
