package mcpkit_test

import (
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/mcpkit"
)

func TestNames(t *testing.T) {
	tests := []struct {
		name string
		keys []mcpkit.Key
		want string
	}{
		{"local only", []mcpkit.Key{{"nexus", "substrate"}, {"nexus", "vkb"}}, "substrate vkb"},
		{"unique downstream keeps its name", []mcpkit.Key{{"nexus", "vkb"}, {"dev", "github"}}, "vkb github"},
		{"underscores become dashes", []mcpkit.Key{{"dev", "my_server"}}, "my-server"},
		{"same server in two toolboxes", []mcpkit.Key{{"dev", "api"}, {"prod", "api"}}, "dev-api prod-api"},
		{"toolbox underscores too", []mcpkit.Key{{"my_box", "api"}, {"prod", "api"}}, "my-box-api prod-api"},
		{"dash and underscore collide", []mcpkit.Key{{"a", "x_y"}, {"b", "x-y"}}, "a-x-y b-x-y"},
		{"derived name collides", []mcpkit.Key{{"a-b", "c"}, {"a", "b-c"}, {"z", "c"}, {"y", "b-c"}}, "a-b-c a-b-c-2 z-c y-b-c"},
		{"a server named like a local one", []mcpkit.Key{{"nexus", "vkb"}, {"dev", "vkb"}}, "vkb dev-vkb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, a := range mcpkit.Names(tt.keys) {
				if strings.Contains(a.Name, "_") {
					t.Fatalf("agent name %q contains an underscore", a.Name)
				}
				got = append(got, a.Name)
			}
			if strings.Join(got, " ") != tt.want {
				t.Fatalf("Names = %v, want %s", got, tt.want)
			}
			// Stable: the same input gives the same names.
			again := mcpkit.Names(tt.keys)
			for i := range again {
				if again[i].Name != got[i] {
					t.Fatal("names are not stable")
				}
			}
		})
	}
}

func TestSplitName(t *testing.T) {
	for in, want := range map[string][2]string{"substrate_belief_query": {"substrate", "belief_query"}, "vault_my_suffix": {"vault", "my_suffix"}} {
		a, rest, ok := mcpkit.SplitName(in)
		if !ok || a != want[0] || rest != want[1] {
			t.Errorf("SplitName(%q) = %q %q", in, a, rest)
		}
	}
}
