package agents_test

import (
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/agents"
)

func TestNames(t *testing.T) {
	tests := []struct {
		name string
		keys []agents.Key
		want string
	}{
		{"local only", []agents.Key{{"nexus", "substrate"}, {"nexus", "vkb"}}, "substrate vkb"},
		{"unique downstream keeps its name", []agents.Key{{"nexus", "vkb"}, {"dev", "github"}}, "vkb github"},
		{"underscores become dashes", []agents.Key{{"dev", "my_server"}}, "my-server"},
		{"same server in two toolboxes", []agents.Key{{"dev", "api"}, {"prod", "api"}}, "dev-api prod-api"},
		{"toolbox underscores too", []agents.Key{{"my_box", "api"}, {"prod", "api"}}, "my-box-api prod-api"},
		{"dash and underscore collide", []agents.Key{{"a", "x_y"}, {"b", "x-y"}}, "a-x-y b-x-y"},
		{"derived name collides", []agents.Key{{"a-b", "c"}, {"a", "b-c"}, {"z", "c"}, {"y", "b-c"}}, "a-b-c a-b-c-2 z-c y-b-c"},
		{"a server named like a local one", []agents.Key{{"nexus", "vkb"}, {"dev", "vkb"}}, "vkb dev-vkb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, a := range agents.Names(tt.keys) {
				if strings.Contains(a.Name, "_") {
					t.Fatalf("agent name %q contains an underscore", a.Name)
				}
				got = append(got, a.Name)
			}
			if strings.Join(got, " ") != tt.want {
				t.Fatalf("Names = %v, want %s", got, tt.want)
			}
			// Stable: the same input gives the same names.
			again := agents.Names(tt.keys)
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
		a, rest, ok := agents.SplitName(in)
		if !ok || a != want[0] || rest != want[1] {
			t.Errorf("SplitName(%q) = %q %q", in, a, rest)
		}
	}
}
