package app

import (
	"reflect"
	"testing"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/config"
)

// TestTransitionalRules: while a reload runs, a toolbox the new
// configuration removes keeps its old rule, the new rules apply, and every
// tool rule of both holds.
func TestTransitionalRules(t *testing.T) {
	old := config.Access{Toolboxes: map[string]config.Rule{"secret": {Roles: []string{principal.Admin}}, "dev": {Roles: []string{principal.Admin}}},
		Tools: []config.ToolRule{{Pattern: "tn_user_*", Rule: config.Rule{Users: []string{"ann"}}}}}
	new := config.Access{Toolboxes: map[string]config.Rule{"dev": {Roles: []string{principal.Member}}},
		Tools: []config.ToolRule{{Pattern: "prod__*", Rule: config.Rule{Roles: []string{principal.Admin}}}}}
	got := transitional(old, new)
	want := config.Access{Toolboxes: map[string]config.Rule{"secret": {Roles: []string{principal.Admin}}, "dev": {Roles: []string{principal.Member}}},
		Tools: []config.ToolRule{{Pattern: "prod__*", Rule: config.Rule{Roles: []string{principal.Admin}}}, {Pattern: "tn_user_*", Rule: config.Rule{Users: []string{"ann"}}}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("transitional rules:\n got %+v\nwant %+v", got, want)
	}
	if got := transitional(config.Access{}, config.Access{}); !got.Empty() {
		t.Fatalf("no rules before or after: %+v", got)
	}
}
