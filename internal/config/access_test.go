package config

import (
	"slices"
	"strings"
	"testing"
)

func TestAccess(t *testing.T) {
	const head = "toolboxes:\n  dev:\n    mcpServers: {}\naccess:\n"
	tests := []struct {
		name string
		src  string
		want []string // errors; nil: it loads
	}{
		{name: "rules", src: "  toolboxes:\n    dev: {roles: [admin]}\n    nexus: {users: [alice]}\n  tools:\n    'tn_user_*': {roles: [member], users: [bob]}\n"},
		{name: "unknown toolbox", src: "  toolboxes:\n    prod: {roles: [admin]}\n",
			want: []string{`c.yaml:6:5: access.toolboxes.prod: no toolbox "prod" in this file: give one of [nexus dev]`}},
		{name: "unknown role", src: "  tools:\n    x: {roles: [owner]}\n",
			want: []string{`c.yaml:6:17: access.tools.x.roles[0]: "owner" is not a role: admin or member`}},
		{name: "bad glob", src: "  tools:\n    'a[': {roles: [admin]}\n",
			want: []string{`c.yaml:6:5: access.tools["a["]: "a[" is not a tool name or a valid glob (tn_user_*, prod__github__*)`}},
		{name: "empty rule", src: "  tools:\n    x: {}\n",
			want: []string{`c.yaml:6:8: access.tools.x: allows nobody: give roles (admin, member) or users (user names); admins may use every tool anyway`}},
		{name: "unknown key", src: "  tool:\n    x: {roles: [admin]}\n",
			want: []string{`c.yaml:5:3: access.tool: unknown key "tool" (did you mean "tools"?)`}},
		{name: "unknown rule key", src: "  tools:\n    x: {role: [admin]}\n",
			want: []string{`c.yaml:6:9: access.tools.x.role: unknown key "role" (did you mean "roles"?)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("c.yaml", []byte(head+tc.src), envOf(nil))
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if r := cfg.Access.Toolboxes["dev"]; !slices.Equal(r.Roles, []string{"admin"}) {
					t.Errorf("dev's rule: %+v", r)
				}
				if len(cfg.Access.Tools) != 1 || cfg.Access.Tools[0].Pattern != "tn_user_*" || !slices.Equal(cfg.Access.Tools[0].Users, []string{"bob"}) {
					t.Errorf("tool rules: %+v", cfg.Access.Tools)
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded; want %v", tc.want)
			}
			got := strings.Split(strings.TrimSpace(err.Error()), "\n")
			if !slices.Equal(got, tc.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
