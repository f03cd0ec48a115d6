package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

var update = flag.Bool("update", false, "rewrite docs/tools.md (the tool schema snapshots are rewritten by each server package's own -update)")

func openApp(t *testing.T) *app.App {
	t.Helper()
	a, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// TestToolsDoc keeps docs/tools.md generated from the schemas.
func TestToolsDoc(t *testing.T) {
	a, _ := vaultApp(t) // with a vault, so that its agents are documented too
	testtools.Golden(t, filepath.Join("..", "..", "docs", "tools.md"), app.ToolsMarkdown(a.Registry), *update)
}

// TestEveryLocalSchemaCompiles: a tool's input schema is compiled on its
// first call (registry.Tool.CompileSchema), so a schema of Nexus's own that
// does not compile is caught here, for every tool the app registers.
func TestEveryLocalSchemaCompiles(t *testing.T) {
	a, _ := vaultApp(t)
	tools := a.Registry.List()
	if len(tools) < 50 {
		t.Fatalf("%d tools registered", len(tools))
	}
	for _, tool := range tools {
		if err := tool.CompileSchema(); err != nil {
			t.Errorf("%s: %v", tool.ID.Name(), err)
		}
	}
}

func TestDemoDataLoadsOnlyIntoANewDatabase(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 {
		a, err := app.Open(context.Background(), app.Config{DataDir: dir, Demo: true})
		if err != nil {
			t.Fatal(err)
		}
		var n int
		a.Store.DB().QueryRow(`SELECT COUNT(*) FROM beliefs`).Scan(&n)
		a.Close()
		if n == 0 || (i == 1 && n != 6) {
			t.Fatalf("open %d: %d beliefs", i, n)
		}
	}
}

// TestHealthAndReadiness: a replica whose store is gone is alive (Health)
// but not ready (Ready).
func TestHealthAndReadiness(t *testing.T) {
	a := openApp(t)
	ctx := context.Background()
	h := a.Health(ctx)
	if h["status"] != "ok" || h["store"] != "sqlite" || h["instance"] == "" {
		t.Fatalf("health %v", h)
	}
	if r := a.Ready(ctx); r["status"] != "ok" {
		t.Fatalf("ready %v", r)
	}
	a.Store.Close()
	if h := a.Health(ctx); h["status"] != "ok" {
		t.Errorf("health with a closed store: %v, want alive", h)
	}
	if r := a.Ready(ctx); r["status"] == "ok" {
		t.Errorf("ready with a closed store: %v, want unavailable", r)
	}
}

func TestEveryCallIsTraced(t *testing.T) {
	a := openApp(t)
	ctx := context.Background()
	a.Pipeline.Call(ctx, pipeline.Request{Tool: "belief_create", Surface: "test", Args: json.RawMessage(`{"content":"traced","context":{"sessionId":"s-1","workspaceId":"w-1"}}`)})
	a.Pipeline.Call(ctx, pipeline.Request{Tool: "belief_get", Surface: "test", Args: json.RawMessage(`{"belief_id":"missing"}`)})
	a.Pipeline.Call(ctx, pipeline.Request{Tool: "no_such_tool", Surface: "test"})
	a.Traces.Flush()
	rows, err := a.Store.DB().Query(`SELECT toolbox, server, tool, source, COALESCE(session_id, ''), workspace, outcome, COALESCE(error_code, ''), args_bytes > 0, result_bytes > 0 FROM traces ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var toolbox, server, tool, source, session, ws, outcome, code string
		var hasArgs, hasResult bool
		if err := rows.Scan(&toolbox, &server, &tool, &source, &session, &ws, &outcome, &code, &hasArgs, &hasResult); err != nil {
			t.Fatal(err)
		}
		if len(session) == 26 && session != "s-1" {
			session = "<new ULID>" // a call naming no session starts one
		}
		got = append(got, fmt.Sprintf("%s/%s/%s %s session=%s ws=%s %s %s args=%v result=%v", toolbox, server, tool, source, session, ws, outcome, code, hasArgs, hasResult))
	}
	want := []string{
		"nexus/substrate/belief_create local session=s-1 ws=w-1 ok  args=true result=true",
		"nexus/substrate/belief_get local session=<new ULID> ws=default error NOT_FOUND args=true result=false",
		"//no_such_tool  session= ws=default error NOT_FOUND args=false result=false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("traces:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestReadinessNamesOpenBreakers: a downstream server whose tool fails on
// the server's side 5 times in a row has its circuit breaker opened, and
// /readyz's body names it while the replica stays ready.
func TestReadinessNamesOpenBreakers(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "broken", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errors.New("the backend is down")
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	ctx := context.Background()
	cfg := filepath.Join(t.TempDir(), "nexus.yaml")
	yaml := "toolboxes:\n  tb:\n    description: a broken server\n    mcpServers:\n      broken:\n        url: " + ts.URL + "/\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(ctx, app.Config{DataDir: t.TempDir(), ConfigPath: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if r := a.Ready(ctx); r["downstream_breakers_open"] != nil {
		t.Fatalf("ready before any failure: %v", r)
	}
	for i := range 6 {
		o := a.Pipeline.Call(ctx, pipeline.Request{Tool: "tb__broken__fail", Surface: "test"})
		if o.Err == nil {
			t.Fatalf("call %d of a failing tool succeeded", i)
		}
	}
	r := a.Ready(ctx)
	if r["status"] != "ok" || fmt.Sprint(r["downstream_breakers_open"]) != "[tb/broken]" {
		t.Fatalf("ready %v: want ok, naming tb/broken", r)
	}
}
