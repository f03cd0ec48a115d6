package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testtools"
)

var (
	helloOnce sync.Once
	helloBin  string
	helloErr  error
)

// helloServer builds the SDK's example "hello" server (a real downstream
// MCP server over stdio: one tool, greet).
func helloServer(t *testing.T) string {
	t.Helper()
	helloOnce.Do(func() {
		dir, err := os.MkdirTemp("", "nexus-peers-")
		if err != nil {
			helloErr = err
			return
		}
		helloBin = filepath.Join(dir, "hello")
		out, err := exec.Command("go", "build", "-o", helloBin, "github.com/modelcontextprotocol/go-sdk/examples/server/hello").CombinedOutput()
		if err != nil {
			helloErr = err
			t.Logf("%s", out)
		}
	})
	if helloErr != nil {
		t.Fatalf("build the SDK hello server: %v", helloErr)
	}
	return helloBin
}

func writeConfig(t testing.TB, v any) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	b, _ := json.MarshalIndent(v, "", "  ")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitForTool waits until cs lists the tool name.
func waitForTool(t *testing.T, cs *mcp.ClientSession, name string) {
	t.Helper()
	testtools.EventuallyErr(t, 30*time.Second, "tool "+name+" to be listed", func() error {
		if names := toolNames(t, cs); !slices.Contains(names, name) {
			return fmt.Errorf("have %v", names)
		}
		return nil
	})
}

// TestDesktopConfigThroughEverySurface points Nexus at an existing
// desktop-client config (an SDK example server, a popular npm server, and a
// broken entry) and reaches every server through each surface.
func TestDesktopConfigThroughEverySurface(t *testing.T) {
	node, memory := testtools.MemoryServer(t)
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"hello":  map[string]any{"command": helloServer(t)},
		"memory": map[string]any{"command": node, "args": []string{memory}, "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}},
		"broken": map[string]any{"url": "http://127.0.0.1:1/mcp"},
	}})
	base := startServe(t, "--config", cfg)

	t.Run("rest lists toolbox tools before any client opened them", func(t *testing.T) {
		code, tools := getJSON(t, "GET", base+"/api/tools?toolbox=default", "")
		names := map[string]bool{}
		for _, tool := range tools["tools"].([]any) {
			names[tool.(map[string]any)["name"].(string)] = true
		}
		if code != 200 || !names["default__hello__greet"] || !names["default__memory__create_entities"] {
			t.Fatalf("GET /api/tools?toolbox=default: %d %v", code, names)
		}
	})
	t.Run("flat", func(t *testing.T) {
		cs, _ := connect(t, base+"/mcp")
		waitForTool(t, cs, "default__hello__greet")
		waitForTool(t, cs, "default__memory__create_entities")
		res := call(t, cs, "default__hello__greet", map[string]any{"name": "flat"})
		if res.IsError || text(res) != "Hi flat" {
			t.Fatalf("greet: %s", text(res))
		}
		res = call(t, cs, "default__memory__create_entities", map[string]any{"entities": []map[string]any{{"name": "Nexus", "entityType": "project", "observations": []string{"serves tools"}}}})
		if res.IsError {
			t.Fatalf("memory: %s", text(res))
		}
	})
	t.Run("agents", func(t *testing.T) {
		cs, _ := connect(t, base+"/mcp/agents")
		waitForTool(t, cs, "hello")
		res := call(t, cs, "hello", map[string]any{"mode": "greet", "sessionId": "s", "name": "agents"})
		if res.IsError || text(res) != "Hi agents" {
			t.Fatalf("agent greet: %s", text(res))
		}
	})
	t.Run("transparent", func(t *testing.T) {
		cs, _ := connect(t, base+"/mcp/servers/default/hello")
		if names := toolNames(t, cs); !slices.Equal(names, []string{"greet"}) {
			t.Fatalf("proxied tools: %v", names)
		}
		if info := cs.InitializeResult().ServerInfo; info.Name != "greeter" {
			t.Fatalf("proxied serverInfo: %+v", info)
		}
		if res := call(t, cs, "greet", map[string]any{"name": "proxy"}); text(res) != "Hi proxy" {
			t.Fatalf("proxied call: %s", text(res))
		}
		resp, err := http.Get(base + "/mcp/servers/default/nope")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("unknown server: %d", resp.StatusCode)
		}
	})
	t.Run("transparent, sessionless", func(t *testing.T) {
		// A client of the sessionless protocol stays sessionless through
		// the proxy (the server has sessions only: Nexus keeps one).
		cs := connectSessionless(t, base+"/mcp/servers/default/hello")
		if names := toolNames(t, cs); !slices.Equal(names, []string{"greet"}) {
			t.Fatalf("proxied tools: %v", names)
		}
		if info := cs.InitializeResult().ServerInfo; info == nil || info.Name != "greeter" {
			t.Fatalf("proxied serverInfo: %+v", info)
		}
		if res := call(t, cs, "greet", map[string]any{"name": "proxy"}); text(res) != "Hi proxy" {
			t.Fatalf("proxied call: %s", text(res))
		}
	})
	t.Run("bounded", func(t *testing.T) {
		cs, _ := connect(t, base+"/mcp/bounded")
		if instr := cs.InitializeResult().Instructions; !strings.Contains(instr, "- default: Servers from claude_desktop_config.json") {
			t.Fatalf("instructions: %q", instr)
		}
		res := call(t, cs, "open_toolbox", map[string]any{"toolbox": "default"})
		ob := res.StructuredContent.(map[string]any)
		if ob["servers_connected"] != 2.0 || len(ob["server_names"].([]any)) != 2 || ob["server_errors"].(map[string]any)["broken"] == nil {
			t.Fatalf("open_toolbox: %s", text(res))
		}
		res = call(t, cs, "use_tool", map[string]any{"tool": map[string]any{"toolbox": "default", "server": "hello", "tool": "greet"}, "arguments": map[string]any{"name": "bounded"}})
		if res.IsError || text(res) != "Hi bounded" {
			t.Fatalf("use_tool: %s", text(res))
		}
		res = call(t, cs, "use_tool", map[string]any{"tool": map[string]any{"toolbox": "default", "server": "memory", "tool": "read_graph"}})
		if res.IsError || !strings.Contains(text(res), "Nexus") {
			t.Fatalf("use_tool memory: %s", text(res))
		}
		res = call(t, cs, "get_tools", map[string]any{"tools": []string{"hello_greet"}})
		if got := res.StructuredContent.(map[string]any)["tools"].([]any); len(got) != 1 {
			t.Fatalf("get_tools downstream: %s", text(res))
		}
		if res := call(t, cs, "hello_greet", map[string]any{"name": "discovered"}); text(res) != "Hi discovered" {
			t.Fatalf("discovered downstream tool: %s", text(res))
		}
	})
}

func TestInvalidConfigFailsAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nexus.yaml")
	os.WriteFile(path, []byte("toolboxes:\n  dev:\n    mcpServers:\n      github:\n        command: gh\n        url: http://x\n"), 0o600)
	_, errOut, code := runNexus(t, "", "tools", "list", "--config", path, "--data-dir", t.TempDir())
	if code == 0 || !strings.Contains(errOut, "nexus.yaml") || !strings.Contains(errOut, "toolboxes.dev.mcpServers.github") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestCLIWithConfig(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"toolboxes": map[string]any{
		"dev":  map[string]any{"description": "development", "mcpServers": map[string]any{"hello": map[string]any{"command": helloServer(t)}}},
		"prod": map[string]any{"description": "production", "mcpServers": map[string]any{"hello": map[string]any{"command": helloServer(t)}}},
	}})
	dir := t.TempDir()
	out, errOut, code := runNexus(t, "", "tools", "list", "--config", cfg, "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "dev__hello__greet") || !strings.Contains(out, "prod__hello__greet") {
		t.Fatalf("tools list: %d %s %s", code, out, errOut)
	}
	out, _, code = runNexus(t, "", "call", "prod__hello__greet", "--args", `{"name":"cli"}`, "--config", cfg, "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "Hi cli") {
		t.Fatalf("call: %d %s", code, out)
	}
}
