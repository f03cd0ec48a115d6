package ws_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/users"
	"github.com/nexus-mcp/nexus/internal/ws"
)

// approvalServer is the WebSocket surface over a real app (SQLite) whose
// configuration file has chatSection, whose model is a fake.
type approvalServer struct {
	url  string
	app  *app.App
	fake *llmtest.OpenAI
}

// serveApproval starts the surface as the local user, with watching, over an
// app whose configuration file is "toolboxes: {}" and chatSection.
func serveApproval(t *testing.T, chatSection string, script llmtest.Script) *approvalServer {
	t.Helper()
	fake := llmtest.NewOpenAI(t, script)
	model, err := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: fake.URL, Model: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nexus.yaml")
	if err := os.WriteFile(path, []byte("toolboxes: {}\n"+chatSection), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir(), Model: model, ConfigPath: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	h := ws.Handler(ws.Options{Chat: a.Chat, Events: a.Events, Owner: func(ctx context.Context, id string) (string, bool, error) {
		_, owner, ok, err := a.Conversations.Lookup(ctx, id)
		return owner, ok, err
	}})
	srv := httptest.NewServer(localUser(h))
	t.Cleanup(srv.Close)
	return &approvalServer{url: "ws" + strings.TrimPrefix(srv.URL, "http"), app: a, fake: fake}
}

// beliefs counts the beliefs whose content is content: the side effect of
// the write tool the tests call.
func (s *approvalServer) beliefs(t *testing.T, content string) int {
	t.Helper()
	var n int
	if err := s.app.Store.DB().QueryRow(s.app.Store.Q(`SELECT COUNT(*) FROM beliefs WHERE content = ?`), content).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// frame is an event the server sends.
type frame struct {
	Type           string `json:"type"`
	ConversationID string `json:"conversation_id"`
	ToolCallID     string `json:"tool_call_id"`
	ToolName       string `json:"tool_name"`
	ToolInput      string `json:"tool_input"`
	ToolResult     string `json:"tool_result"`
	Source         string `json:"source"`
	Timestamp      string `json:"timestamp"`
	TimeoutSeconds int    `json:"timeout_seconds"`
	IsError        bool   `json:"is_error"`
	Code           string `json:"code"`
	Message        string `json:"message"`
}

// client is a WebSocket client of the tests.
type client struct {
	t   *testing.T
	ctx context.Context
	c   *websocket.Conn
	got []frame // every frame read
}

func dial(t *testing.T, url string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return &client{t: t, ctx: ctx, c: c}
}

func (c *client) send(v string) {
	c.t.Helper()
	if err := c.c.Write(c.ctx, websocket.MessageText, []byte(v)); err != nil {
		c.t.Fatal(err)
	}
}

// until reads frames until one satisfies ok, and returns it.
func (c *client) until(what string, ok func(frame) bool) frame {
	c.t.Helper()
	for {
		_, data, err := c.c.Read(c.ctx)
		if err != nil {
			c.t.Fatalf("waiting for %s: %v (frames so far %s)", what, err, c.types())
		}
		var f frame
		if err := json.Unmarshal(data, &f); err != nil {
			c.t.Fatal(err)
		}
		c.got = append(c.got, f)
		if ok(f) {
			return f
		}
	}
}

// ofType matches a frame of type typ (and tool call id, if given).
func ofType(typ string, id ...string) func(frame) bool {
	return func(f frame) bool { return f.Type == typ && (len(id) == 0 || f.ToolCallID == id[0]) }
}

// end reads up to the turn's last frame (complete or error).
func (c *client) end() frame {
	c.t.Helper()
	return c.until("the turn's end", func(f frame) bool { return f.Type == "complete" || f.Type == "error" && f.Code != "BAD_REQUEST" })
}

func (c *client) types() string {
	var out []string
	for _, f := range c.got {
		out = append(out, f.Type+"("+f.ToolCallID+f.Code+")")
	}
	return strings.Join(out, " ")
}

// count counts the frames read of type typ for tool call id.
func (c *client) count(typ, id string) int {
	n := 0
	for _, f := range c.got {
		if f.Type == typ && f.ToolCallID == id {
			n++
		}
	}
	return n
}

// createCall is a use_tool call of substrate's belief_create (a local tool
// that writes, not read-only) storing content.
func createCall(id, content string) llmtest.Call {
	return llmtest.Call{ID: id, Name: "use_tool", Args: `{"tool":{"toolbox":"nexus","server":"substrate","tool":"belief_create"},"arguments":{"content":"` + content + `"}}`}
}

// queryCall is a use_tool call of substrate's belief_query (read-only).
func queryCall(id string) llmtest.Call {
	return llmtest.Call{ID: id, Name: "use_tool", Args: `{"tool":{"toolbox":"nexus","server":"substrate","tool":"belief_query"},"arguments":{"query":"nexus"}}`}
}

// calls answers the first request with calls, the others with "done".
func calls(cs ...llmtest.Call) llmtest.Script {
	return func(n int, _ *llmtest.Request) llmtest.Answer {
		if n == 1 {
			return llmtest.Answer{Calls: cs}
		}
		return llmtest.Answer{Chunks: []string{"done"}}
	}
}

// toolResults are the tool results the model received in its second
// request, by tool call id.
func (s *approvalServer) toolResults(t *testing.T) map[string]string {
	t.Helper()
	reqs := s.fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was asked %d times, want 2 (the calls, then their results)", len(reqs))
	}
	return reqs[1].LastToolResults()
}

// TestApprovalApprovedAndDenied: with toolApproval always, two parallel
// calls of a write tool each wait for their own answer: approval_request
// follows each tool_start with the same name, input and source; the
// approved call runs (its belief is stored and its result reaches the
// model), the denied one does not run (no belief) and the model gets the
// denial as a tool error, and the turn goes on to complete.
func TestApprovalApprovedAndDenied(t *testing.T) {
	s := serveApproval(t, "chat: {toolApproval: always}\n", calls(createCall("c1", "approved belief"), createCall("c2", "denied belief")))
	c := dial(t, s.url)
	c.send(`{"type":"message","content":"store two beliefs"}`)
	reqs := map[string]frame{}
	for len(reqs) < 2 {
		f := c.until("approval requests", ofType("approval_request"))
		reqs[f.ToolCallID] = f
	}
	// Each approval_request comes right after its call's tool_start (the
	// two calls' events may interleave: they run at once).
	for i, f := range c.got {
		if f.Type != "approval_request" {
			continue
		}
		var start frame
		for j := i - 1; j >= 0; j-- {
			if c.got[j].ToolCallID == f.ToolCallID {
				start = c.got[j]
				break
			}
		}
		if start.Type != "tool_start" || start.ToolCallID != f.ToolCallID || start.ToolName != f.ToolName || start.ToolInput != f.ToolInput ||
			start.Source != f.Source || start.ConversationID != f.ConversationID {
			t.Fatalf("approval_request %+v does not follow its tool_start: %+v", f, start)
		}
		if f.ToolName != "use_tool" || f.Source != "local" || f.TimeoutSeconds != 120 || f.Timestamp == "" || f.ConversationID == "" ||
			!strings.Contains(f.ToolInput, "belief_create") {
			t.Fatalf("approval_request: %+v", f)
		}
	}
	if s.beliefs(t, "approved belief")+s.beliefs(t, "denied belief") != 0 {
		t.Fatal("a tool ran before it was approved")
	}
	conv := reqs["c1"].ConversationID
	c.send(`{"type":"approval","conversation_id":"` + conv + `","tool_call_id":"c2","approved":false}`)
	c.send(`{"type":"approval","conversation_id":"` + conv + `","tool_call_id":"c1","approved":true}`)
	if end := c.end(); end.Type != "complete" {
		t.Fatalf("the turn ended with %+v (frames %s)", end, c.types())
	}
	done := map[string]frame{}
	for _, f := range c.got {
		if f.Type == "tool_complete" {
			done[f.ToolCallID] = f
		}
	}
	ok, denied := done["c1"], done["c2"]
	if ok.IsError || !strings.Contains(ok.ToolResult, "approved belief") {
		t.Errorf("approved call's tool_complete: %+v", ok)
	}
	if !denied.IsError || !strings.Contains(denied.ToolResult, "the user denied this tool call") {
		t.Errorf("denied call's tool_complete: %+v", denied)
	}
	if n := s.beliefs(t, "approved belief"); n != 1 {
		t.Errorf("the approved call stored %d beliefs, want 1", n)
	}
	if n := s.beliefs(t, "denied belief"); n != 0 {
		t.Errorf("the denied call ran: %d beliefs stored", n)
	}
	res := s.toolResults(t)
	if !strings.Contains(res["c1"], "approved belief") || strings.Contains(res["c1"], "error") {
		t.Errorf("the model got for the approved call: %s", res["c1"])
	}
	if res["c2"] != `{"error":"the user denied this tool call"}` {
		t.Errorf("the model got for the denied call: %s", res["c2"])
	}
}

// TestApprovalTimeout: an approval_request not answered within the
// configured approvalTimeout (1 s) is not run: the model gets "no approval
// within 1 s" as a tool error, and the turn completes.
func TestApprovalTimeout(t *testing.T) {
	s := serveApproval(t, "chat: {toolApproval: always, approvalTimeout: 1s}\n", calls(createCall("c1", "never approved")))
	c := dial(t, s.url)
	c.send(`{"type":"message","content":"store a belief"}`)
	if f := c.until("approval_request", ofType("approval_request")); f.TimeoutSeconds != 1 {
		t.Fatalf("timeout_seconds %d, want 1", f.TimeoutSeconds)
	}
	done := c.until("tool_complete", ofType("tool_complete", "c1"))
	if !done.IsError || done.ToolResult != `{"error":"no approval within 1 s"}` {
		t.Fatalf("tool_complete: %+v", done)
	}
	if end := c.end(); end.Type != "complete" {
		t.Fatalf("the turn ended with %+v", end)
	}
	if n := s.beliefs(t, "never approved"); n != 0 {
		t.Fatalf("the call ran without approval: %d beliefs", n)
	}
	if got := s.toolResults(t)["c1"]; got != `{"error":"no approval within 1 s"}` {
		t.Fatalf("the model got %s", got)
	}
}

// TestApprovalWritesMode: a user whose own setting is writes (the server's
// default being never) is asked before a call of a tool that is not
// read-only, and not before a call of a read-only one, both through
// use_tool: the tool it names decides.
func TestApprovalWritesMode(t *testing.T) {
	s := serveApproval(t, "", calls(queryCall("read"), createCall("write", "written")))
	ctx := users.WithUser(context.Background(), &users.Local)
	if body, isErr := s.app.Pipeline.Call(ctx, pipeline.Request{Tool: "tn_user_preferences_set", Args: json.RawMessage(`{"toolApproval":"writes"}`), Surface: "test"}).Body(); isErr {
		t.Fatalf("set the preference: %s", body)
	}
	c := dial(t, s.url)
	c.send(`{"type":"message","content":"look, then write"}`)
	req := c.until("approval_request", ofType("approval_request"))
	if req.ToolCallID != "write" {
		t.Fatalf("asked for %q, want the write call", req.ToolCallID)
	}
	c.send(`{"type":"approval","conversation_id":"` + req.ConversationID + `","tool_call_id":"write","approved":true}`)
	if end := c.end(); end.Type != "complete" {
		t.Fatalf("the turn ended with %+v", end)
	}
	if n := c.count("approval_request", "read"); n != 0 {
		t.Errorf("asked for the read-only call %d times", n)
	}
	if c.count("tool_complete", "read") != 1 || c.count("tool_complete", "write") != 1 {
		t.Errorf("both calls should complete: %s", c.types())
	}
	if n := s.beliefs(t, "written"); n != 1 {
		t.Errorf("the approved write stored %d beliefs", n)
	}
}

// TestApprovalBadFrames: approval frames missing a field, with a bad
// approved, naming an unknown call or a conversation with none waiting, or
// answering a call a second time, are refused with BAD_REQUEST saying
// what is wrong; the waiting call still takes its one good answer.
func TestApprovalBadFrames(t *testing.T) {
	s := serveApproval(t, "chat: {toolApproval: always}\n", calls(createCall("c1", "after bad frames")))
	c := dial(t, s.url)
	c.send(`{"type":"message","content":"store a belief"}`)
	conv := c.until("approval_request", ofType("approval_request")).ConversationID
	bad := func(frame, want string) {
		t.Helper()
		c.send(frame)
		e := c.until("the error of "+frame, ofType("error"))
		if e.Code != "BAD_REQUEST" || !strings.Contains(e.Message, want) {
			t.Errorf("%s: %+v, want BAD_REQUEST %q", frame, e, want)
		}
	}
	bad(`{"type":"approval","tool_call_id":"c1","approved":true}`, "approval needs a conversation_id")
	bad(`{"type":"approval","conversation_id":"`+conv+`","approved":true}`, "approval needs a tool_call_id")
	bad(`{"type":"approval","conversation_id":"`+conv+`","tool_call_id":"c1"}`, "approval needs approved: true runs the tool call, false denies it")
	bad(`{"type":"approval","conversation_id":"`+conv+`","tool_call_id":"c1","approved":"yes"}`, `approved must be true or false, not "yes"`)
	bad(`{"type":"approval","conversation_id":"`+conv+`","tool_call_id":"zz","approved":true}`,
		`unknown tool_call_id "zz": the tool calls of conversation "`+conv+`" waiting for approval are "c1"`)
	bad(`{"type":"approval","conversation_id":"elsewhere","tool_call_id":"c1","approved":true}`,
		`no tool call of conversation "elsewhere" is waiting for approval`)
	if n := s.beliefs(t, "after bad frames"); n != 0 {
		t.Fatalf("a bad frame ran the call: %d beliefs", n)
	}
	c.send(`{"type":"approval","conversation_id":"` + conv + `","tool_call_id":"c1","approved":true}`)
	if end := c.end(); end.Type != "complete" {
		t.Fatalf("the turn ended with %+v", end)
	}
	bad(`{"type":"approval","conversation_id":"`+conv+`","tool_call_id":"c1","approved":false}`,
		`no tool call of conversation "`+conv+`" is waiting for approval`)
	if n := s.beliefs(t, "after bad frames"); n != 1 {
		t.Fatalf("the approved call stored %d beliefs, want 1 (the second answer must change nothing)", n)
	}
}

// TestApprovalCancel: a cancel while a call waits for approval ends the
// wait and the turn (CANCELLED); the call does not run and the model is not
// asked again.
func TestApprovalCancel(t *testing.T) {
	s := serveApproval(t, "chat: {toolApproval: always}\n", calls(createCall("c1", "cancelled belief")))
	c := dial(t, s.url)
	c.send(`{"type":"message","content":"store a belief"}`)
	conv := c.until("approval_request", ofType("approval_request")).ConversationID
	c.send(`{"type":"cancel","conversation_id":"` + conv + `"}`)
	end := c.end()
	if end.Type != "error" || end.Code != "CANCELLED" {
		t.Fatalf("the turn ended with %+v, want CANCELLED", end)
	}
	if c.count("tool_complete", "c1") != 1 {
		t.Errorf("the waiting call should complete (not run): %s", c.types())
	}
	if n := s.beliefs(t, "cancelled belief"); n != 0 {
		t.Errorf("the cancelled call ran: %d beliefs", n)
	}
	if n := len(s.fake.Requests()); n != 1 {
		t.Errorf("the model was asked %d times after the cancel, want 1 in all", n)
	}
	// The call no longer waits: an answer now is refused.
	c.send(`{"type":"approval","conversation_id":"` + conv + `","tool_call_id":"c1","approved":true}`)
	if e := c.until("error", ofType("error")); e.Code != "BAD_REQUEST" {
		t.Errorf("an answer after the cancel: %+v", e)
	}
}

// TestApprovalFromWatcher: a second socket of the same user, watching the
// conversation on the same replica, receives the approval_request of a
// turn another socket runs, and its answer is accepted.
func TestApprovalFromWatcher(t *testing.T) {
	s := serveApproval(t, "chat: {toolApproval: always}\n", func(n int, _ *llmtest.Request) llmtest.Answer {
		switch n {
		case 2:
			return llmtest.Answer{Calls: []llmtest.Call{createCall("c1", "approved elsewhere")}}
		default:
			return llmtest.Answer{Chunks: []string{"ok"}}
		}
	})
	c := dial(t, s.url)
	c.send(`{"type":"message","content":"hello"}`)
	first := c.end()
	if first.Type != "complete" {
		t.Fatalf("first turn: %+v", first)
	}
	conv := first.ConversationID
	w := dial(t, s.url)
	w.send(`{"type":"watch","conversation_id":"` + conv + `"}`)
	// The watch is registered once a frame sent after it is answered.
	w.send(`{"type":"approval","conversation_id":"` + conv + `","tool_call_id":"none","approved":true}`)
	if e := w.until("the error of an early answer", ofType("error")); e.Code != "BAD_REQUEST" {
		t.Fatalf("watch or early answer: %+v", e)
	}
	c.send(`{"type":"message","conversation_id":"` + conv + `","content":"store a belief"}`)
	req := w.until("the watched approval_request", func(f frame) bool { return f.Type == "approval_request" || f.Type == "error" })
	if req.Type != "approval_request" || req.ToolCallID != "c1" {
		t.Fatalf("watcher got %+v (frames %s)", req, w.types())
	}
	w.send(`{"type":"approval","conversation_id":"` + conv + `","tool_call_id":"c1","approved":true}`)
	if end := c.end(); end.Type != "complete" {
		t.Fatalf("the turn ended with %+v", end)
	}
	if c.count("approval_request", "c1") != 1 {
		t.Errorf("the socket running the turn got no approval_request: %s", c.types())
	}
	if n := s.beliefs(t, "approved elsewhere"); n != 1 {
		t.Fatalf("the call approved by the watcher stored %d beliefs", n)
	}
}
