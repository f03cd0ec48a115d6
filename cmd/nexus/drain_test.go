package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/testtools"
)

// sleepServer is a downstream MCP server (Streamable HTTP, in the test
// process) with one tool, sleep, that answers after ms milliseconds. Each
// call's ms is sent on started, when given, as the call begins (without
// blocking).
func sleepServer(t *testing.T, started ...chan<- int) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "sleeper", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "sleep", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"ms": map[string]any{"type": "integer"}}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Ms int }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			for _, c := range started {
				select {
				case c <- in.Ms:
				default:
				}
			}
			select {
			case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL + "/"
}

// TestServeDrainsOnSIGTERM: on SIGTERM "nexus serve" turns not ready
// (/readyz 503 "draining") while still alive (/healthz 200), lets a call in
// flight finish with its result, ends MCP GET streams, lets a chat turn
// running on a WebSocket finish before closing it with 1012, and exits 0.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "nexus.yaml")
	sleeping := make(chan int, 8)
	yaml := "toolboxes:\n  slow:\n    description: a slow server\n    mcpServers:\n      sleeper:\n        url: " + sleepServer(t, sleeping) + "\n        transport: http\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewOpenAI(t, func(int, *llmtest.Request) llmtest.Answer {
		return llmtest.Answer{Chunks: []string{"a ", "turn ", "that ", "outlives ", "the ", "signal"}, Delay: 400 * time.Millisecond}
	})
	t.Setenv("NEXUS_LLM_PROVIDER", "openai")
	t.Setenv("NEXUS_LLM_BASE_URL", fake.URL)
	t.Setenv("NEXUS_LLM_MODEL", "fake-model")
	t.Setenv("NEXUS_LLM_API_KEY", "sk-fake")
	t.Setenv("NEXUS_ALLOW_LOOPBACK_MODEL_URLS", "1")
	addr := testtools.FreeAddr(t)
	cmd := startProcess(t, binary, "serve", "--addr", addr, "--data-dir", t.TempDir(), "--config", cfg, "--drain-delay", "1s", "--drain-timeout", "10s")
	base := "http://" + addr
	testtools.EventuallyErr(t, 30*time.Second, "nexus serve to become ready at "+base, func() error { return ready(base) })

	ctx := context.Background()
	// With a session: its GET stream is what the drain ends.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "drain-test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, testtools.WithSession())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// A warm-up call connects the toolbox.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow__sleeper__sleep", Arguments: map[string]any{"ms": 1}}); err != nil {
		t.Fatal(err)
	}
	// A GET stream, as a client listening for server messages opens it.
	streamEnded := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("GET", base+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			streamEnded <- err
			return
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		streamEnded <- err
	}()

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow__sleeper__sleep", Arguments: map[string]any{"ms": 2500}})
		done <- outcome{res, err}
	}()
	// A chat turn over the WebSocket, running when the signal comes: it
	// finishes, then the connection is closed with 1012 (connect again).
	chatConn := wsDial(t, base, "")
	chatConn.Write(ctx, websocket.MessageText, []byte(`{"type":"message","content":"talk slowly"}`))
	type chatOutcome struct {
		text     string
		complete bool
		end      error
	}
	chatDone := make(chan chatOutcome, 1)
	tokenSeen := make(chan struct{})
	go func() {
		firstToken := tokenSeen
		var o chatOutcome
		for {
			_, data, err := chatConn.Read(ctx)
			if err != nil {
				o.end = err
				chatDone <- o
				return
			}
			var e map[string]any
			json.Unmarshal(data, &e)
			if e["type"] == "token" {
				if firstToken != nil {
					close(firstToken)
					firstToken = nil
				}
				o.text += e["content"].(string)
			}
			o.complete = o.complete || e["type"] == "complete"
		}
	}()
	// The signal comes once the call has reached the downstream server and
	// the turn has streamed its first token: both are in flight. (A fixed
	// wait was sometimes too short under load: the call then arrived while
	// draining, SERVICE_UNAVAILABLE.)
	for ms := 0; ms != 2500; {
		select {
		case ms = <-sleeping:
		case <-time.After(30 * time.Second):
			t.Fatal("the slow call did not reach the downstream server")
		}
	}
	select {
	case <-tokenSeen:
	case <-time.After(30 * time.Second):
		t.Fatal("the chat turn streamed no token")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testtools.EventuallyErr(t, 900*time.Millisecond, "/readyz to answer 503 draining", func() error {
		code, body := get(t, base+"/readyz")
		if code != http.StatusServiceUnavailable || !strings.Contains(body, `"draining"`) {
			return &probeError{code, body}
		}
		return nil
	})
	if code, body := get(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while draining: %d %s, want 200 (alive)", code, body)
	}
	select {
	case <-streamEnded:
	case <-time.After(5 * time.Second):
		t.Error("the MCP GET stream did not end on SIGTERM")
	}
	o := <-done
	if o.err != nil || o.res.IsError {
		t.Fatalf("the call in flight at SIGTERM: %v %+v, want its result", o.err, o.res)
	}
	if text := o.res.Content[0].(*mcp.TextContent).Text; text != "slept" {
		t.Errorf("the call in flight returned %q", text)
	}
	select {
	case o := <-chatDone:
		if !o.complete || o.text != "a turn that outlives the signal" || websocket.CloseStatus(o.end) != websocket.StatusServiceRestart {
			t.Errorf("the chat turn running at SIGTERM: complete %v, text %q, ended with %v (want complete, the whole text, close 1012)", o.complete, o.text, o.end)
		}
	case <-time.After(10 * time.Second):
		t.Error("the WebSocket was not closed after its turn on SIGTERM")
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("nexus serve after SIGTERM: %v, want exit 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("nexus serve did not exit after draining")
	}
}

type probeError struct {
	code int
	body string
}

func (e *probeError) Error() string { return http.StatusText(e.code) + ": " + e.body }

// get returns the status and body of GET url (0 when it cannot connect).
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// ready is the readiness probe of "nexus serve" at base: GET /readyz
// answers 200.
func ready(base string) error {
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &probeError{resp.StatusCode, string(b)}
	}
	return nil
}
