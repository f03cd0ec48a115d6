package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

func getJSON(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: not JSON: %s", method, url, b)
	}
	return resp.StatusCode, out
}

func TestREST(t *testing.T) {
	base := startServe(t)
	code, tools := getJSON(t, "GET", base+"/api/tools", "")
	// The tools of the registry.Tools view: the bounded surface's
	// meta-tools are listed by that surface only.
	if code != 200 || len(tools["tools"].([]any)) != len(localTools) {
		t.Fatalf("GET /api/tools: %d %v", code, tools)
	}
	for _, tool := range tools["tools"].([]any) {
		if name := tool.(map[string]any)["name"]; name == "get_tools" || name == "open_toolbox" || name == "use_tool" {
			t.Errorf("GET /api/tools lists the bounded meta-tool %s", name)
		}
	}
	first := tools["tools"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "description", "source", "parameters", "inputSchema"} {
		if first[k] == nil {
			t.Fatalf("tool lacks %s: %v", k, first)
		}
	}
	code, res := getJSON(t, "POST", base+"/api/tools/belief_create:call", `{"content":"REST calls go through the pipeline"}`)
	if code != 200 || res["success"] != true {
		t.Fatalf("call: %d %v", code, res)
	}
	code, res = getJSON(t, "POST", base+"/api/tools/belief_get:call", `{"belief_id":"nope"}`)
	if e, _ := res["error"].(map[string]any); code != 404 || e["code"] != "NOT_FOUND" || e["requestId"] == nil {
		t.Fatalf("error call: %d %v", code, res)
	}
	// use_tool's outcome is the tool's: its body, or the one error shape.
	useTool := func(args string) string {
		return `{"tool":{"toolbox":"nexus","server":"substrate","tool":"belief_query"},"arguments":` + args + `}`
	}
	code, res = getJSON(t, "POST", base+"/api/tools/use_tool:call", useTool(`{"query":"pipeline"}`))
	if code != 200 || res["success"] != true || res["beliefs"] == nil || res["content"] != nil {
		t.Fatalf("use_tool over REST: %d %v", code, res)
	}
	code, res = getJSON(t, "POST", base+"/api/tools/use_tool:call", useTool(`{"query":5}`))
	if e, _ := res["error"].(map[string]any); code != 400 || e["code"] != "BAD_REQUEST" {
		t.Fatalf("use_tool's failing tool over REST: %d %v", code, res)
	}
	// Traces are written in batches, a few milliseconds after the call.
	testtools.EventuallyErr(t, 10*time.Second, "the trace of the failed call", func() error {
		code, res := getJSON(t, "GET", base+"/api/traces?tool=belief_get&outcome=error", "")
		if code == 200 && len(res["items"].([]any)) == 1 {
			return nil
		}
		return fmt.Errorf("traces: %d %v", code, res)
	})
	code, res = getJSON(t, "GET", base+"/openapi.json", "")
	if code != 200 || res["openapi"] != "3.1.0" || res["paths"].(map[string]any)["/api/tools/belief_query:call"] == nil {
		t.Fatalf("openapi: %d", code)
	}
}
