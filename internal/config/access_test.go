package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/access/principal"
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
				if r := cfg.Access.Toolboxes["dev"]; !slices.Equal(r.Roles, []string{principal.Admin}) {
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

func TestModel(t *testing.T) {
	env := envOf(map[string]string{"KEY": "sk-secret"})
	cfg, err := Parse("c.yaml", []byte("toolboxes: {}\nmodel:\n  provider: openai\n  model: gpt-4o-mini\n  apiKey: ${KEY}\n  baseUrl: http://127.0.0.1:11434/v1\n"), env)
	if err != nil {
		t.Fatal(err)
	}
	if m := cfg.Model; m == nil || m.Provider != "openai" || m.Model != "gpt-4o-mini" || m.APIKey != "sk-secret" || m.BaseURL != "http://127.0.0.1:11434/v1" {
		t.Fatalf("model: %+v", cfg.Model)
	}
	for src, want := range map[string]string{
		"toolboxes: {}\nmodel:\n  provider: gemini\n  model: x\n": `c.yaml:3:13: model.provider: "gemini" is not a provider`,
		"toolboxes: {}\nmodel:\n  provider: openai\n":             "c.yaml:3:3: model: needs provider (openai or anthropic) and model",
		"toolboxes: {}\nmodel:\n  provider: openai\n  modle: x\n": `c.yaml:4:3: model.modle: unknown key "modle"`,
	} {
		_, err := Parse("c.yaml", []byte(src), env)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

func TestMaxIdleConnections(t *testing.T) {
	cfg, err := Parse("c.yaml", []byte("toolboxes:\n  t:\n    mcpServers:\n      s: {url: \"https://h/mcp\", maxIdleConnections: 16}\n"), envOf(nil))
	if err != nil || cfg.Toolboxes["t"].Servers["s"].MaxIdleConnections != 16 {
		t.Fatalf("maxIdleConnections: %v %+v", err, cfg)
	}
	_, err = Parse("c.yaml", []byte("toolboxes:\n  t:\n    mcpServers:\n      s: {url: \"https://h/mcp\", maxIdleConnections: 0}\n"), envOf(nil))
	if err == nil || !strings.Contains(err.Error(), "maxIdleConnections: must be a whole number from 1 to 10000") {
		t.Fatalf("maxIdleConnections 0: %v", err)
	}
}
