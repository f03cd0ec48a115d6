package mcpkit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// TestTextResultJSONAsMarshal: a local tool's result written directly is,
// byte for byte, what encoding/json makes of the SDK's types.
func TestTextResultJSONAsMarshal(t *testing.T) {
	valence := &registry.Tool{Family: registry.Valence}
	tutor := &registry.Tool{Family: registry.Tutor}
	plain := &registry.Tool{}
	cases := map[string]*pipeline.Outcome{
		"object":             {Tool: plain, RequestID: "01R", SessionID: "s-1", Workspace: "default", Result: json.RawMessage(`{"a":1,"b":"<x> & y"}`)},
		"object with spaces": {Tool: plain, RequestID: "01R", SessionID: "s-1", Workspace: "w", Result: json.RawMessage("{ \"a\" : [1, 2],\n \"é\": \"\\u00e9\\n\" }")},
		"array":              {Tool: plain, RequestID: "01R", Workspace: "w", Result: json.RawMessage(`[1,2,3]`)},
		"string":             {Tool: plain, RequestID: "01R", SessionID: "s", Workspace: "w", Result: json.RawMessage(`"just <text> & more \u2028"`)},
		"no session":         {Tool: plain, RequestID: "01R", Workspace: "w", Result: json.RawMessage(`{}`)},
		"empty":              {Tool: plain, RequestID: "01R", Workspace: "w"},
		"large":              {Tool: plain, RequestID: "01R", SessionID: "s", Workspace: "w", Result: json.RawMessage(`{"t":"` + strings.Repeat("z\\\"", 5000) + `"}`)},
		"error, plain":       {Tool: plain, RequestID: "01R", SessionID: "s", Workspace: "w", Err: errs.E(errs.Conflict, "it <conflicts>")},
		"error, valence":     {Tool: valence, RequestID: "01R", SessionID: "s", Workspace: "w", Err: errs.E(errs.NotFound, "belief %q not found", "b-1")},
		"error, tutor":       {Tool: tutor, RequestID: "01R", Workspace: "w", Err: errs.Invalid("sessionId", "is not a ULID")},
		"error, no tool":     {RequestID: "01R", Workspace: "w", Err: errs.E(errs.NotFound, "unknown tool")},
	}
	for name, o := range cases {
		want, err := json.Marshal(Result(o))
		if err != nil {
			t.Fatal(err)
		}
		got, err := textResultJSON(o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got  %s\n want %s", name, got, want)
		}
	}
}

func BenchmarkResultJSON(b *testing.B) {
	o := &pipeline.Outcome{Tool: &registry.Tool{}, RequestID: "01R", SessionID: "s-1", Workspace: "default",
		Result: json.RawMessage(`{"beliefs":[` + strings.TrimSuffix(strings.Repeat(`{"id":"b","content":"Langara CPSC 1150 transfers to SFU as CMPT 1XX","score":0.5},`, 20), ",") + `]}`)}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			textResultJSON(o)
		}
	})
	b.Run("sdk types", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(Result(o))
		}
	})
}
