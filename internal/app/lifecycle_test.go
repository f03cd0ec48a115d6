package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/pipeline"
)

// TestOpenFailingLateLeavesNoGoroutine: an Open that fails after the
// telemetry provider (console: a span batcher's goroutine) and the trace
// writer started ends both, and everything else it opened.
func TestOpenFailingLateLeavesNoGoroutine(t *testing.T) {
	cases := []struct {
		name string
		cfg  func(t *testing.T) app.Config
		want error // nil: any error
	}{
		{"tension judge without a model", func(t *testing.T) app.Config {
			return app.Config{DataDir: t.TempDir(), ConfigPath: writeConfig(t, "tensions: {judge: model}\n")}
		}, app.ErrJudgeNoModel},
		{"unknown event engine", func(t *testing.T) app.Config {
			return app.Config{DataDir: t.TempDir(), Events: "bogus://events"}
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_EXPORTER", "console")
			cfg := c.cfg(t)
			ignore := goleak.IgnoreCurrent()
			a, err := app.Open(context.Background(), cfg)
			if err == nil {
				a.Close()
				t.Fatal("Open succeeded, want an error")
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("Open: %v, want %v", err, c.want)
			}
			goleak.VerifyNone(t, ignore)
		})
	}
}

// TestCloseLeavesNoGoroutine: Close ends every goroutine Open and the
// calls since started: the telemetry provider's, the trace writer's, the
// event bus's, the downstream servers' manager's and the store's.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	cfg := app.Config{DataDir: t.TempDir(), ConfigPath: writeConfig(t, "")}
	ignore := goleak.IgnoreCurrent()
	a, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if o := a.Pipeline.Call(ctx, pipeline.Request{Tool: "belief_create", Surface: "test", Args: json.RawMessage(`{"content":"closing"}`)}); o.Err != nil {
		t.Fatal(o.Err)
	}
	if err := a.Events.Publish(ctx, app.TopicKeysRotated, map[string]int{"version": 1}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	goleak.VerifyNone(t, ignore)
}
