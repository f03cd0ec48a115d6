package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/pipeline"
)

// TestOneDebugLinePerCall: every call logs one debug line with the tool,
// the outcome and the duration, and never its arguments.
func TestOneDebugLinePerCall(t *testing.T) {
	p0, _ := newPipeline(t, nil)
	var buf bytes.Buffer
	p := pipeline.New(pipeline.Options{Registry: p0.Registry(), Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	for _, args := range []string{`{"name":"secret-one"}`, `{"name":"missing"}`, `{"bad":"secret-two"}`} {
		p.Call(context.Background(), pipeline.Request{Tool: "echo", Args: json.RawMessage(args), Surface: "test"})
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d log lines for 3 calls:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{"ok", "NOT_FOUND", "BAD_REQUEST"} {
		var rec map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil {
			t.Fatal(err)
		}
		if rec["level"] != "DEBUG" || rec["tool"] != "echo" || rec["outcome"] != want || rec["duration"] == nil {
			t.Fatalf("line %d: %v", i, rec)
		}
	}
	if strings.Contains(buf.String(), "secret") {
		t.Fatalf("arguments logged:\n%s", buf.String())
	}
}

// TestSchemaErrorsNameTheField: a schema violation is a BAD_REQUEST whose
// Field names the argument (surfaces show it, e.g. REST's "field").
func TestSchemaErrorsNameTheField(t *testing.T) {
	p, _ := newPipeline(t, nil)
	for args, want := range map[string]string{`{"name":"far too long a name"}`: "name", `{"name":"a","count":-1}`: "count", `{}`: ""} {
		o := p.Call(context.Background(), pipeline.Request{Tool: "echo", Args: json.RawMessage(args)})
		if o.Err == nil || o.Err.Field != want {
			t.Errorf("%s: %v (field %q), want field %q", args, o.Err, o.Err.Field, want)
		}
	}
}
