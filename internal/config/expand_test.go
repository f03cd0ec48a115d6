package config

// Environment expansion.

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestExpand(t *testing.T) {
	env := envOf(map[string]string{"SET": "value", "EMPTY": "", "DOLLAR": "$X", "B": "bee"})
	tests := []struct {
		in, want string
		missing  []string
		err      string
	}{
		{in: "plain", want: "plain"},
		{in: "${SET}", want: "value"},
		{in: "a-${SET}-b", want: "a-value-b"},
		{in: "${SET}${SET}", want: "valuevalue"},
		{in: "${UNSET:-fallback}", want: "fallback"},
		{in: "${SET:-fallback}", want: "value"},
		{in: "${UNSET:-}", want: ""},
		{in: "${EMPTY:-fallback}", want: "", missing: nil},                         // set to "" counts as set
		{in: "${UNSET:-a:-b c}", want: "a:-b c"},                                   // the default is text
		{in: "${UNSET:-${B}}", want: "bee"},                                        // ... that may expand
		{in: "${UNSET:-${ALSO_UNSET:-deep}}", want: "deep"},                        // nested defaults
		{in: "${SET:-${NEVER}}", want: "value"},                                    // an unused default looks nothing up
		{in: "${UNSET:-${NEVER}}", missing: []string{"NEVER"}},                     // a used one does
		{in: "${UNSET}", missing: []string{"UNSET"}},                               // unset, no default
		{in: "${U1}/${U2}/${U1}", missing: []string{"U1", "U2"}},                   // each once, in order
		{in: "$$", want: "$"},                                                      // $$ escapes
		{in: "$${SET}", want: "${SET}"},                                            // ... so this is literal
		{in: "$$$${SET}", want: "$${SET}"},                                         // pairs
		{in: "$$${SET}", want: "$value"},                                           // $$ then ${SET}
		{in: "${UNSET:-$$5}", want: "$5"},                                          // $$ in a default
		{in: "cost $5, $HOME and $ alone $", want: "cost $5, $HOME and $ alone $"}, // other $ kept
		{in: "${DOLLAR}", want: "$X"},                                              // values are not expanded again
		{in: "${lower_case9}", missing: []string{"lower_case9"}},
		{in: "x${SET}}", want: "xvalue}"}, // a } outside is text
		{in: "${", err: `a ${ is not closed with }`},
		{in: "${SET", err: `a ${ is not closed with }`},
		{in: "${SET:-abc", err: `a ${ is not closed with }`},
		{in: "${SET:-${X:-y}", err: `a ${ is not closed with }`},
		{in: "${}", err: `"${}": a variable name is letters, digits and '_', not starting with a digit`},
		{in: "${1A}", err: `"${1A}": a variable name is letters, digits and '_', not starting with a digit`},
		{in: "${A B}", err: `"${A B}" is not supported: write ${A} or ${A:-default}`},
		{in: "${A-b}", err: `"${A-b}" is not supported: write ${A} or ${A:-default}`},
		{in: "${A:b}", err: `"${A:b}" is not supported: write ${A} or ${A:-default}`},
		{in: "${A:=b}", err: `"${A:=b}" is not supported`},
		{in: "${input:token}", err: `"${input:token}" is not supported`},
	}
	for _, tt := range tests {
		got, missing, err := Expand(tt.in, env)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Expand(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Expand(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(missing, tt.missing) {
			t.Errorf("Expand(%q) missing = %q, want %q", tt.in, missing, tt.missing)
		}
		if len(tt.missing) == 0 && got != tt.want {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestExpansionEverywhere: every string value is expanded, keys are not.
func TestExpansionEverywhere(t *testing.T) {
	src := `
toolboxes:
  tb:
    description: "${V} toolbox"
    mcpServers:
      s1:
        command: ${V}-cmd
        args: ["${V}", "${UNSET:-dflt}", "$$V"]
        env: {"${K}": "${V}"}
        cwd: /srv/${V}
        toolFilters: ["${V}_*"]
        timeout: ${SECS}s
        connectTimeout: ${UNSET:-5s}
        transport: ${T:-stdio}
      s2:
        url: https://${V}.example.com/mcp
        headers: {"X-Key": "${V}"}
        type: ${TYPE}
`
	cfg, err := Parse("e.yaml", []byte(src), envOf(map[string]string{"V": "v", "K": "k", "SECS": "7", "TYPE": "sse"}))
	if err != nil {
		t.Fatal(err)
	}
	tb := cfg.Toolboxes["tb"]
	s1, s2 := tb.Servers["s1"], tb.Servers["s2"]
	want1 := &Server{Name: "s1", Transport: Stdio, Command: "v-cmd", Args: []string{"v", "dflt", "$V"},
		Env: map[string]string{"${K}": "v"}, Cwd: "/srv/v", ToolFilters: []string{"v_*"},
		Timeout: 7 * time.Second, ConnectTimeout: 5 * time.Second}
	want2 := &Server{Name: "s2", Transport: SSE, URL: "https://v.example.com/mcp",
		Headers: map[string]string{"X-Key": "v"}, Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout}
	if tb.Description != "v toolbox" {
		t.Errorf("description %q", tb.Description)
	}
	if !reflect.DeepEqual(s1, want1) {
		t.Errorf("s1:\n got %+v\nwant %+v", s1, want1)
	}
	if !reflect.DeepEqual(s2, want2) {
		t.Errorf("s2:\n got %+v\nwant %+v", s2, want2)
	}
}
