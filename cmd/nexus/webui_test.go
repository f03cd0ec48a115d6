package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// webAnswer is the fake model's final answer in TestWebUIInBrowser:
// Markdown with a table and a fenced code block, streamed in chunks.
var webAnswer = []string{
	"Nexus has **three** agents.\n\n",
	"| Course | Transfers to |\n|---|---|\n",
	"| MATH 1171 | UBC MATH 100 |\n",
	"| CPSC 1150 | UVic CSC 110 |\n\n",
	"```go\nfunc main() {\n\tfmt.Println(\"transfer\")\n}\n```\n",
	"Done.",
}

// longAnswer is the fake model's answer to a prompt asking for a "long
// answer" (test/browser/perf.mjs measures the page while it streams): about
// 10,000 small chunks of Markdown, paragraphs, tables and fenced code
// repeated, each word or cell a numbered marker "t<n>" so the page can tell
// which chunk the screen shows.
func longAnswer() []string {
	var out []string
	n := 0
	mark := func(format string) string {
		n++
		return fmt.Sprintf(format, n)
	}
	for len(out) < 10000 {
		for i := 0; i < 12; i++ {
			out = append(out, mark(" t%d"))
		}
		out = append(out, "\n\n", "| Course | Transfers to |\n|---|---|\n")
		for i := 0; i < 6; i++ {
			out = append(out, mark("| t%d "), mark("| t%d |\n"))
		}
		out = append(out, "\n```go\n")
		for i := 0; i < 8; i++ {
			out = append(out, mark("x := t%d\n"))
		}
		out = append(out, "```\n\n")
	}
	return append(out, "End of the long answer.")
}

// lastUser is the text of the request's last user message.
func lastUser(req *llmtest.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i]["role"] == "user" {
			s, _ := req.Messages[i]["content"].(string)
			return s
		}
	}
	return ""
}

// TestWebUIInBrowser drives the web UI in Debian's Chromium (playwright-core,
// test/browser/chat.mjs and the files it imports) against nexus serve and a
// fake model speaking the OpenAI wire format, at a phone's size (390×844)
// and a desktop's (1280×800): the welcome screen, a message streaming into
// Markdown (a table, highlighted code with a copy button), tool cards
// naming the tool run (use_tool's too) with their source and state, the
// conversation's own URL surviving a reload, each section alone on screen
// and nothing wider than the screen, with no console errors and no serious
// or critical axe-core violation in any view. Screenshots
// of every view go to NEXUS_SCREENSHOTS (or the test's temporary
// directory). It prints, measured and not asserted, the first render of /
// and long tasks and lag while a long answer streams (perf.mjs).
func TestWebUIInBrowser(t *testing.T) {
	node, modules, chromium := testtools.Browser(t)
	long := longAnswer()
	fake := llmtest.NewOpenAI(t, func(n int, req *llmtest.Request) llmtest.Answer {
		if strings.Contains(lastUser(req), "long answer") {
			return llmtest.Answer{Chunks: long, Delay: 250 * time.Microsecond}
		}
		if len(req.LastToolResults()) == 0 {
			return llmtest.Answer{Chunks: []string{"Let me look. "}, Calls: []llmtest.Call{
				{ID: "c1", Name: "get_tools", Args: `{}`},
				{ID: "c2", Name: "use_tool", Args: `{"tool":{"toolbox":"nexus","server":"vkb","tool":"session_list"},"arguments":{"limit":5}}`},
			}}
		}
		return llmtest.Answer{Chunks: webAnswer, Delay: 100 * time.Millisecond}
	})
	t.Setenv("NEXUS_LLM_PROVIDER", "openai")
	t.Setenv("NEXUS_LLM_BASE_URL", fake.URL)
	t.Setenv("NEXUS_LLM_MODEL", "fake-model")
	t.Setenv("NEXUS_LLM_API_KEY", "sk-fake")
	base := startServe(t)
	shots := os.Getenv("NEXUS_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(testtools.RepoRoot(t), "test", "browser", "chat.mjs"), base, shots, chromium)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Dir = filepath.Dir(modules)
	testtools.OwnGroup(cmd) // Chromium and its helpers with it
	out, err := cmd.CombinedOutput()
	testtools.EndGroup(t, cmd)
	if err != nil {
		t.Fatalf("the browser test failed: %v\n%s", err, out)
	}
	t.Logf("browser: %s (screenshots in %s)", out, shots)
}

// TestWebUISignInBeyondLoopback drives the web UI in Chromium
// (test/browser/remote.mjs) against nexus serve listening on 0.0.0.0,
// where a request without a token is anyone's: at both sizes the page
// shows the sign-in screen alone, refuses a wrong token, signs in with a
// token from nexus users add, chats, stays signed in across a reload,
// replaces its last turn with Edit and resend and with Regenerate, asks
// before tools once the preference says so (one approved, one denied), and
// signs out. Nothing between the browser and the server is scripted.
func TestWebUISignInBeyondLoopback(t *testing.T) {
	node, modules, chromium := testtools.Browser(t)
	t.Setenv("NEXUS_DB", "")
	fake := llmtest.NewOpenAI(t, func(n int, req *llmtest.Request) llmtest.Answer {
		// "use two tools": two calls (approve.mjs approves one and denies
		// the other), then an answer saying what came back.
		if strings.Contains(lastUser(req), "use two tools") {
			results := req.LastToolResults()
			if len(results) == 0 {
				return llmtest.Answer{Calls: []llmtest.Call{
					{ID: "c1", Name: "get_tools", Args: `{}`},
					{ID: "c2", Name: "use_tool", Args: `{"tool":{"toolbox":"nexus","server":"vkb","tool":"session_list"},"arguments":{"limit":5}}`},
				}}
			}
			verdict := func(id string) string {
				if strings.Contains(results[id], "denied") {
					return "denied"
				}
				return "ran"
			}
			return llmtest.Answer{Chunks: []string{fmt.Sprintf("get_tools %s, session_list %s.", verdict("c1"), verdict("c2"))}}
		}
		return llmtest.Answer{Chunks: []string{"You said: ", lastUser(req)}}
	})
	t.Setenv("NEXUS_LLM_PROVIDER", "openai")
	t.Setenv("NEXUS_LLM_BASE_URL", fake.URL)
	t.Setenv("NEXUS_LLM_MODEL", "fake-model")
	t.Setenv("NEXUS_LLM_API_KEY", "sk-fake")
	dir := t.TempDir()
	out, _, code := runNexus(t, "", "users", "add", "alice", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "nxs_") {
		t.Fatalf("users add: %d %s", code, out)
	}
	token := strings.TrimSpace(out[strings.Index(out, "nxs_"):])
	_, port, _ := net.SplitHostPort(testtools.FreeAddr(t))
	base := startServeAt(t, dir, "0.0.0.0:"+port, "--allow-hosts", "nexus.test")
	shots := os.Getenv("NEXUS_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(testtools.RepoRoot(t), "test", "browser", "remote.mjs"), base, shots, chromium, token)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Dir = filepath.Dir(modules)
	testtools.OwnGroup(cmd)
	out2, err := cmd.CombinedOutput()
	testtools.EndGroup(t, cmd)
	if err != nil {
		t.Fatalf("the browser test failed: %v\n%s", err, out2)
	}
	t.Logf("browser: %s (screenshots in %s)", out2, shots)
}
