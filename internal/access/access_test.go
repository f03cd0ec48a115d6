package access

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

var (
	alice = principal.Principal{ID: "u-alice", Name: "alice", Tier: "free", Role: principal.Member}
	bob   = principal.Principal{ID: "u-bob", Name: "bob", Tier: "free", Role: principal.Member}
	root  = principal.Principal{ID: "u-root", Name: "root", Tier: "paid", Role: principal.Admin}
)

func TestToolRules(t *testing.T) {
	rules := config.Access{
		Toolboxes: map[string]config.Rule{"prod": {Roles: []string{principal.Admin}}, "dev": {Users: []string{"alice"}}},
		Tools: []config.ToolRule{
			{Pattern: "tn_user_byok_*", Rule: config.Rule{Users: []string{"bob"}}},
			{Pattern: "belief_query", Rule: config.Rule{Roles: []string{principal.Member}}},
		},
	}
	a := New(nil, rules)
	tool := func(toolbox, server, name string) *registry.Tool {
		return &registry.Tool{ID: registry.ID{Toolbox: toolbox, Server: server, Tool: name}}
	}
	tests := []struct {
		who  principal.Principal
		tool *registry.Tool
		want bool
	}{
		{alice, tool("nexus", "substrate", "belief_query"), true},
		{alice, tool("nexus", "tutor", "tn_user_byok_add"), false}, // the glob names bob only
		{bob, tool("nexus", "tutor", "tn_user_byok_add"), true},
		{bob, tool("nexus", "tutor", "tn_user_quota"), true}, // no rule applies
		{bob, tool("prod", "github", "get_issue"), false},    // toolbox rule
		{alice, tool("dev", "github", "get_issue"), true},
		{bob, tool("dev", "github", "get_issue"), false},
		{root, tool("prod", "github", "get_issue"), true}, // admins use every tool
		{root, tool("nexus", "tutor", "tn_user_byok_add"), true},
		{principal.Principal{ID: "x", Name: "x", Role: principal.Member}, tool("nexus", "substrate", "belief_query"), true},
	}
	for _, tc := range tests {
		if got := a.Tool(tc.who, tc.tool); got != tc.want {
			t.Errorf("%s may use %s: %v, want %v", tc.who.Name, tc.tool.ID.Name(), got, tc.want)
		}
	}
	if !New(nil, config.Access{}).Tool(bob, tool("prod", "github", "get_issue")) {
		t.Error("without rules every tool is everyone's")
	}
}

func TestDefaultWorkspace(t *testing.T) {
	a := New(nil, config.Access{})
	if got := a.DefaultWorkspace(alice); got != "user:alice" {
		t.Errorf("alice's default workspace: %q", got)
	}
	if got := a.DefaultWorkspace(root); got != "default" {
		t.Errorf("an admin's default workspace: %q", got)
	}
}

func forbidden(err error) bool {
	var e *errs.Error
	return errors.As(err, &e) && e.Code == errs.Forbidden
}

func TestWorkspaces(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a := New(st, config.Access{})
		now := time.Now()
		a.now = func() time.Time { return now }
		steps := []struct {
			who       principal.Principal
			ws        string
			forbidden bool
		}{
			{alice, "user:alice", false},
			{bob, "user:alice", true}, // another's personal workspace
			{root, "user:alice", false},
			{alice, "default", true}, // admins' (the migration's)
			{root, "default", false},
			{alice, "team", false}, // nobody held it: now alice's
			{bob, "team", true},
			{root, "team", false},
			{root, "ops", false}, // an admin's use claims it too
			{alice, "ops", true},
		}
		for _, s := range steps {
			err := a.Workspace(ctx, s.who, s.ws)
			if forbidden(err) != s.forbidden || (err != nil && !s.forbidden) {
				t.Fatalf("%s in %s: %v, want forbidden %v", s.who.Name, s.ws, err, s.forbidden)
			}
		}
		// Membership, and the cache: another process's change is seen
		// within CacheFor; this process's at once.
		other := New(st, config.Access{})
		if err := other.AddMember(ctx, "team", bob.ID); err != nil {
			t.Fatal(err)
		}
		if err := a.Workspace(ctx, bob, "team"); !forbidden(err) {
			t.Fatalf("bob in team before the cache expires: %v", err)
		}
		now = now.Add(CacheFor)
		if err := a.Workspace(ctx, bob, "team"); err != nil {
			t.Fatalf("bob, a member, in team: %v", err)
		}
		if err := a.RemoveMember(ctx, "team", bob.ID); err != nil {
			t.Fatal(err)
		}
		if err := a.Workspace(ctx, bob, "team"); !forbidden(err) {
			t.Fatalf("bob in team after removal: %v", err)
		}
		if err := a.RemoveMember(ctx, "team", bob.ID); !errors.Is(err, errs.Kind(errs.NotFound)) {
			t.Fatalf("removing a non-member: %v", err)
		}
		if err := a.SetOwner(ctx, "default", alice.ID); err != nil {
			t.Fatal(err)
		}
		if err := a.Workspace(ctx, alice, "default"); err != nil {
			t.Fatalf("alice, made owner of default: %v", err)
		}
		list, err := a.List(ctx, alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, w := range list {
			names = append(names, w.ID)
		}
		if len(names) != 3 || names[0] != "default" || names[1] != "team" || names[2] != "user:alice" {
			t.Fatalf("alice's workspaces: %v", names)
		}
	})
}

// TestConcurrentClaims: many users naming one new workspace at once: exactly
// one of them holds it.
func TestConcurrentClaims(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a := New(st, config.Access{})
		var allowed atomic.Int32
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				who := principal.Principal{ID: "u" + string(rune('a'+i)), Name: "n" + string(rune('a'+i)), Role: principal.Member}
				err := a.Workspace(ctx, who, "contested")
				switch {
				case err == nil:
					allowed.Add(1)
				case !forbidden(err):
					t.Errorf("claim: %v", err)
				}
			}()
		}
		wg.Wait()
		if n := allowed.Load(); n != 1 {
			t.Fatalf("%d users hold the contested workspace, want 1", n)
		}
	})
}

func TestServer(t *testing.T) {
	a := New(nil, config.Access{
		Toolboxes: map[string]config.Rule{"prod": {Roles: []string{principal.Admin}}},
		Tools: []config.ToolRule{
			{Pattern: "dev__github__delete_*", Rule: config.Rule{Users: []string{"alice"}}},
			{Pattern: "*_secret", Rule: config.Rule{Users: []string{"alice"}}},
			{Pattern: "tn_user_*", Rule: config.Rule{Roles: []string{principal.Admin}}},
		},
	})
	tests := []struct {
		who             principal.Principal
		toolbox, server string
		want            bool
	}{
		{root, "prod", "github", true},
		{bob, "prod", "github", false}, // the toolbox rule
		{bob, "dev", "github", false},  // a tool rule names some of its tools
		{alice, "dev", "github", true}, // both tool rules allow alice
		{bob, "dev", "files", false},   // a pattern starting with a wildcard may match any tool
		{bob, "nexus", "tutor", false}, // tn_user_* is the built-in toolbox's, by flat name
	}
	for _, tc := range tests {
		if got := a.Server(tc.who, tc.toolbox, tc.server); got != tc.want {
			t.Errorf("%s reaches %s/%s: %v, want %v", tc.who.Name, tc.toolbox, tc.server, got, tc.want)
		}
	}
	b := New(nil, config.Access{Tools: []config.ToolRule{{Pattern: "dev__github__delete_*", Rule: config.Rule{Users: []string{"alice"}}}}})
	if !b.Server(bob, "dev", "files") || !b.Server(bob, "ops", "github") {
		t.Error("a rule naming dev/github's tools hides other servers")
	}
}

// TestSetRules: a reloaded configuration's rules decide the next call.
func TestSetRules(t *testing.T) {
	a := New(nil, config.Access{})
	prod := &registry.Tool{ID: registry.ID{Toolbox: "prod", Server: "github", Tool: "get_issue"}}
	if !a.Tool(bob, prod) || !a.Server(bob, "prod", "github") {
		t.Fatal("without rules every tool is everyone's")
	}
	a.SetRules(config.Access{Toolboxes: map[string]config.Rule{"prod": {Roles: []string{principal.Admin}}}})
	if a.Tool(bob, prod) || a.Server(bob, "prod", "github") || !a.Tool(root, prod) {
		t.Error("the new rules are not applied")
	}
}

// TestForgetAndOnChange: a change of members or owners this process makes
// calls the OnChange functions (serve publishes them to the other
// replicas), and Forget (another replica's change) drops the cached
// decisions at once.
func TestForgetAndOnChange(t *testing.T) {
	st := storetest.OpenTestSQLite(t)
	ctx := context.Background()
	a, other := New(st, config.Access{}), New(st, config.Access{})
	var changes atomic.Int64
	other.OnChange(func(context.Context) { changes.Add(1) })
	if err := other.SetOwner(ctx, "team", alice.ID); err != nil {
		t.Fatal(err)
	}
	if err := other.AddMember(ctx, "team", bob.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.Workspace(ctx, bob, "team"); err != nil {
		t.Fatalf("bob, a member: %v", err)
	}
	if err := other.RemoveMember(ctx, "team", bob.ID); err != nil {
		t.Fatal(err)
	}
	if n := changes.Load(); n != 3 {
		t.Errorf("OnChange called %d times for three changes", n)
	}
	if err := a.Workspace(ctx, bob, "team"); err != nil {
		t.Fatalf("cached before Forget: %v", err)
	}
	a.Forget()
	if err := a.Workspace(ctx, bob, "team"); !forbidden(err) {
		t.Fatalf("bob after his removal and Forget: %v", err)
	}
}

// TestToolbox (issue 21, item 8): a toolbox is hidden from who when its
// rule refuses them, or a tool rule refusing them matches every tool it
// can hold; a rule on some of its tools, or allowing them, hides nothing.
// Admins know of every toolbox.
func TestToolbox(t *testing.T) {
	a := New(storetest.OpenTestSQLite(t), config.Access{
		Toolboxes: map[string]config.Rule{"prod": {Roles: []string{"admin"}}, "dev": {Users: []string{"alice"}}},
		Tools: []config.ToolRule{
			{Pattern: "ops__*", Rule: config.Rule{Roles: []string{"admin"}}},
			{Pattern: "ci*", Rule: config.Rule{Users: []string{"alice"}}},
			{Pattern: "docs__github__*", Rule: config.Rule{Roles: []string{"admin"}}},
			{Pattern: "tn_*", Rule: config.Rule{Roles: []string{"admin"}}},
		},
	})
	for _, tc := range []struct {
		who     principal.Principal
		toolbox string
		want    bool
	}{
		{bob, "prod", false}, {root, "prod", true},
		{bob, "dev", false}, {alice, "dev", true},
		{bob, "ops", false}, {root, "ops", true},
		{bob, "ci", false}, {alice, "ci", true},
		{bob, "docs", true},  // one server's tools only
		{bob, "nexus", true}, // some local tools only
		{bob, "other", true},
	} {
		if got := a.Toolbox(tc.who, tc.toolbox); got != tc.want {
			t.Errorf("Toolbox(%s, %s) = %v, want %v", tc.who.Name, tc.toolbox, got, tc.want)
		}
	}
	everything := New(storetest.OpenTestSQLite(t), config.Access{Tools: []config.ToolRule{{Pattern: "*", Rule: config.Rule{Roles: []string{"admin"}}}}})
	if everything.Toolbox(bob, "nexus") || everything.Toolbox(bob, "dev") || !everything.Toolbox(root, "dev") {
		t.Error(`a rule "*" for admins: bob still knows of toolboxes, or the admin does not`)
	}
}

// TestPersonalNamesReservedInAnyCase: a workspace id that starts with
// "user:" in any case is a personal workspace's, and personal workspace ids
// are lower case: "USER:BOB", "User:dave2" and "user:Bob" look like
// personal workspaces, so nobody, not even an admin, creates them, by use,
// owner or member (issue 21, item 10).
func TestPersonalNamesReservedInAnyCase(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a := New(st, config.Access{})
		for _, ws := range []string{"USER:BOB", "User:dave2", "user:Bob", "uSeR:alice"} {
			for _, who := range []principal.Principal{alice, bob, root} {
				if err := a.Workspace(ctx, who, ws); err == nil {
					t.Errorf("%s acted in %s", who.Name, ws)
				}
			}
			if err := a.AddMember(ctx, ws, alice.ID); !errors.Is(err, errs.Kind(errs.BadRequest)) {
				t.Errorf("add-member %s: %v, want BAD_REQUEST", ws, err)
			}
			if err := a.SetOwner(ctx, ws, alice.ID); !errors.Is(err, errs.Kind(errs.BadRequest)) {
				t.Errorf("set-owner %s: %v, want BAD_REQUEST", ws, err)
			}
		}
		list, err := a.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range list {
			if w.ID != "default" { // the migration's
				t.Errorf("workspace %s (owner %q) was created", w.ID, w.Owner)
			}
		}
		// The personal workspaces themselves still work.
		if err := a.Workspace(ctx, bob, "user:bob"); err != nil {
			t.Errorf("bob in user:bob: %v", err)
		}
		if err := a.Workspace(ctx, root, "user:bob"); err != nil {
			t.Errorf("an admin in user:bob: %v", err)
		}
	})
}
