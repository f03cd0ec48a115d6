package app_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/pipeline"
)

// TestPreferenceDefaults: tn_user_preferences_get reports the server's
// tool approval for users who set none (chat.toolApproval, never without
// one), so that Settings can say what "Server's default" means.
func TestPreferenceDefaults(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ config, want string }{
		{"", "never"},
		{"chat:\n  toolApproval: writes\n", "writes"},
	} {
		a, err := app.Open(ctx, app.Config{DataDir: t.TempDir(), ConfigPath: writeConfig(t, tc.config)})
		if err != nil {
			t.Fatal(err)
		}
		o := a.Pipeline.Call(ctx, pipeline.Request{Tool: "tn_user_preferences_get", Surface: "test"})
		a.Close()
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		var out struct {
			Defaults struct {
				ToolApproval string `json:"toolApproval"`
			} `json:"defaults"`
		}
		if err := json.Unmarshal(o.Result, &out); err != nil || out.Defaults.ToolApproval != tc.want {
			t.Fatalf("config %q: %s (%v), want defaults.toolApproval %q", tc.config, o.Result, err, tc.want)
		}
	}
}
