// Package chat runs the bounded tool loop (SPEC section 6): a person's
// message goes to a model, which starts with the bounded meta-tools
// (get_tools, open_toolbox, search_tools, use_tool) and gains each tool it discovers; its
// tool calls run through the one pipeline (authorization, quota, tracing as
// for any call), concurrently when it makes several at once; every token and
// tool call is reported as an [Event] as it happens, and the whole turn is
// stored in the conversation. The WebSocket surface streams the events; the
// tutor's tn_session_ask runs the same loop with the tutor's tools.
package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// Event types, as seed 004's WebSocket protocol names them.
const (
	Token        = "token"
	ToolStart    = "tool_start"
	ToolComplete = "tool_complete"
	Complete     = "complete"
	Error        = "error"
)

// Codes of error events that are not a tool error's.
const (
	// NoModel: no model is configured for the user.
	NoModel = "MODEL_NOT_CONFIGURED"
	// ModelError: the model provider failed (refused key, outage, cut
	// stream); RATE_LIMITED when it limited the rate.
	ModelError = "MODEL_ERROR"
	// StepLimit and TimeLimit end a runaway turn.
	StepLimit = "STEP_LIMIT"
	TimeLimit = "TIME_LIMIT"
	// Cancelled: the client cancelled or went away.
	Cancelled = "CANCELLED"
)

// Event is one thing a turn reports, in seed 004's shape (fields by type;
// tool_call_id pairs a tool_start with its tool_complete).
type Event struct {
	Type           string `json:"type"`
	Content        string `json:"content,omitempty"`
	ToolName       string `json:"tool_name,omitempty"`
	ToolInput      string `json:"tool_input,omitempty"`
	ToolResult     string `json:"tool_result,omitempty"`
	Source         string `json:"source,omitempty"`
	Timestamp      string `json:"timestamp,omitempty"`
	ToolCallID     string `json:"tool_call_id,omitempty"`
	IsError        bool   `json:"is_error,omitempty"`
	MessageID      string `json:"message_id,omitempty"`
	ConversationID string `json:"conversation_id,omitempty"`
	Message        string `json:"message,omitempty"`
	Code           string `json:"code,omitempty"`
	RetryAfter     int    `json:"retry_after,omitempty"`
	// TimeoutSeconds is how long an approval_request waits for its answer.
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
	// Model is the model that answered (complete): provider and model
	// name, "openai gpt-4o-mini"; OwnKey says it ran on the user's own key.
	Model  string `json:"model,omitempty"`
	OwnKey bool   `json:"own_key,omitempty"`
}

// ModelFunc returns the model a user's turn runs on, as choice asks
// ([Turn.Model]): by default their own credentials first (byok true: not
// counted against the quota), else the server's; a nil provider means none
// is configured.
type ModelFunc func(ctx context.Context, who principal.Principal, choice string) (p llm.Provider, byok bool, err error)

// ModelServer is the [Turn.Model] choice of the server's model.
const ModelServer = "server"

// Options configure a [Chat].
type Options struct {
	Pipeline      *pipeline.Pipeline
	Conversations *conversation.Store
	// Quotas counts one prompt per user message run on the server's model;
	// nil counts nothing.
	Quotas *quota.Quotas
	Model  ModelFunc
	// System is the default system prompt; empty means [DefaultSystem].
	System string
	// Memory are the names of tools every turn starts with besides its
	// own (the meta-tools, or Turn.Tools): the search of past
	// conversations, exchange_search, so that the model can recall what
	// was said before without discovering it first. Those the caller may
	// not use are left out.
	Memory []string
	// MaxSteps bounds the model turns of one message (default 10);
	// TurnTimeout bounds its time (default 5 min).
	MaxSteps    int
	TurnTimeout time.Duration
	// Approval is the tool approval mode of a user's turns (approval.go);
	// nil: no call waits. ApprovalTimeout bounds the wait for one answer
	// (default DefaultApprovalTimeout); it counts toward TurnTimeout.
	Approval        ApprovalFunc
	ApprovalTimeout time.Duration
	Logger          *slog.Logger
	Now             func() time.Time
}

// DefaultSystem is the system prompt of a chat.
const DefaultSystem = "You are the assistant of Nexus, a hub of tools. To find a tool for a task, call search_tools with what you want to do; " +
	"get_tools gives an overview of the agents and toolboxes, and the schemas of the tools you name. Call tools by the names they give (or call any tool with use_tool). " +
	"To recall what was said in earlier conversations, call exchange_search. " +
	"Say which tools your answer relies on. Answer in Markdown."

// Chat runs turns.
type Chat struct {
	o       Options
	waiting waiting
}

// New returns a chat.
func New(o Options) *Chat {
	if o.System == "" {
		o.System = DefaultSystem
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = 10
	}
	if o.TurnTimeout <= 0 {
		o.TurnTimeout = 5 * time.Minute
	}
	if o.ApprovalTimeout <= 0 {
		o.ApprovalTimeout = DefaultApprovalTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Chat{o: o}
}

// Turn is one message of a person.
type Turn struct {
	// ConversationID names the conversation; empty starts a new one (its
	// id chosen at once, named by every event). A conversation that does
	// not exist yet is made, the caller's, once the turn is accepted: a
	// refused prompt stores nothing.
	ConversationID string
	Content        string
	// Platform of a new conversation (default "chat").
	Platform string
	// Tools, when set, are the flat names of the tools the model starts
	// with instead of the bounded meta-tools; System replaces the system
	// prompt (tn_session_ask: the tutor's tools and prompt).
	Tools  []string
	System string
	// Store says whether the turn is stored in the conversation (default
	// true; tn_session_ask stores its own messages).
	NoStore bool
	// Approvable says that the surface running the turn delivers the
	// user's answers to approval requests ([Chat.Answer]), so that calls
	// may wait for them (Options.Approval); false: no call waits (no one
	// could answer: tn_session_ask).
	Approvable bool
	// Model chooses the model: empty for the default (the user's newest
	// key, else the server's), ModelServer, or the id of one of the user's
	// keys (tn_user_byok_list).
	Model string
	// ReplaceLast makes the turn replace the conversation's last user
	// message and what followed it (Regenerate, Edit and resend): they are
	// deleted once the turn is accepted, before the model sees the history.
	ReplaceLast bool
}

// Result is a finished turn.
type Result struct {
	// ConversationID is the turn's conversation, set even when the turn
	// was refused (then it is not stored, unless it existed).
	ConversationID string
	MessageID      string
	Text           string
	// Events counts the events emitted; ToolCalls the tools called.
	Events, ToolCalls int
	// Sources are the tools whose results the answer may rest on.
	ToolUses []ToolUse
}

// ToolUse is one tool call of a turn, as the conversation stores it.
type ToolUse struct {
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Tool    string          `json:"tool"` // the flat name of the tool run
	Input   json.RawMessage `json:"input"`
	Result  string          `json:"result"`
	Source  string          `json:"source"`
	IsError bool            `json:"is_error,omitempty"`
	// DurationMS is the time from the call's tool_start to its
	// tool_complete (an approval's wait included), as the live card shows it.
	DurationMS int64 `json:"duration_ms"`
}

// Run runs one turn: it emits the turn's events as they happen, one at a
// time (emit must not block for long; the caller buffers) and returns the result, or the
// error the last event reported. Every event names the turn's conversation,
// from the first on: a new conversation's id is chosen before anything is
// reported, and the conversation is stored only once the turn is accepted
// (its content valid, its prompt admitted by the quota), so that a refused
// prompt writes nothing.
func (c *Chat) Run(ctx context.Context, t Turn, emit func(Event)) (*Result, error) {
	res := &Result{ConversationID: t.ConversationID}
	if res.ConversationID == "" {
		res.ConversationID = conversation.NewID()
	}
	// The calls of one step run at once: their events are emitted one at
	// a time.
	var sending sync.Mutex
	send := func(e Event) {
		sending.Lock()
		defer sending.Unlock()
		if e.ConversationID == "" {
			e.ConversationID = res.ConversationID
		}
		res.Events++
		emit(e)
	}
	fail := func(code string, e error) (*Result, error) {
		ev := Event{Type: Error, Code: code, Message: e.Error()}
		var ee *errs.Error
		if errors.As(e, &ee) {
			ev.Message = ee.Message
			ev.RetryAfter = ee.RetryAfter
		}
		send(ev)
		return res, e
	}
	failErr := func(err error) (*Result, error) {
		code := string(errs.Internal)
		var ee *errs.Error
		if errors.As(err, &ee) {
			code = string(ee.Code)
		}
		return fail(code, err)
	}
	who := c.o.Pipeline.Principal(ctx)
	if strings.TrimSpace(t.Content) == "" {
		return fail(string(errs.BadRequest), errs.Invalid("content", "is empty: send the message's text"))
	}
	model, byok, err := c.o.Model(ctx, who, t.Model)
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			return fail(string(e.Code), err)
		}
		return fail(ModelError, err)
	}
	if model == nil {
		return fail(NoModel, errs.E(errs.UnprocessableEntity, "no language model is configured: an admin sets NEXUS_LLM_PROVIDER (openai or anthropic), "+
			"NEXUS_LLM_MODEL and NEXUS_LLM_API_KEY (and NEXUS_LLM_BASE_URL for Ollama, vLLM or LM Studio), or you add your own key with tn_user_byok_add"))
	}
	target, err := c.resolve(ctx, who, res.ConversationID, t.ConversationID != "")
	if err != nil {
		return failErr(err)
	}
	if t.ReplaceLast && !target.stored {
		return failErr(errs.Invalid("replace_last", "conversation %q has no message of yours to replace", target.id))
	}
	mode, err := c.approvalMode(ctx, who, t.Approvable)
	if err != nil {
		return fail(string(errs.Internal), err)
	}
	if c.o.Quotas != nil {
		tier, _ := quota.ParseTier(who.Tier)
		if _, err := c.o.Quotas.AdmitPrompt(ctx, who.ID, tier, byok, c.o.Now()); err != nil {
			return fail(string(errs.RateLimited), err)
		}
	}
	// Accepted: from here on the turn is stored.
	if t.ReplaceLast {
		if _, err := c.o.Conversations.RewindLastUser(context.WithoutCancel(ctx), target.ws, target.id); err != nil {
			return failErr(err)
		}
	}
	var history []llm.Message
	if target.stored {
		if history, err = c.history(ctx, target.ws, target.id); err != nil {
			return fail(string(errs.Internal), err)
		}
	} else if err := c.create(context.WithoutCancel(ctx), who, t.Platform, &target); err != nil {
		return failErr(err)
	}
	conv, ws := target.id, target.ws
	if !t.NoStore {
		if _, err := c.o.Conversations.Append(context.WithoutCancel(ctx), ws, conv, llm.User, t.Content, nil); err != nil {
			return fail(string(errs.Internal), err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.TurnTimeout)
	defer cancel()
	l := &loop{c: c, ctx: ctx, who: who, conv: conv, ws: ws, owner: target.owner, mode: mode, send: send, res: res, tools: map[string]offered{}}
	system := c.o.System
	if t.System != "" {
		system = t.System
	}
	if err := l.offer(t.Tools); err != nil {
		return fail(string(errs.Internal), err)
	}
	msgs := append(history, llm.Message{Role: llm.User, Content: t.Content})
	text, err := l.run(model, system, msgs)
	res.Text = text
	if !t.NoStore && (text != "" || len(res.ToolUses) > 0) {
		// Whatever the model said and did is stored, even when the turn
		// then failed: a reload shows it.
		uses := make([]any, len(res.ToolUses))
		for i, u := range res.ToolUses {
			uses[i] = u
		}
		ex, serr := c.o.Conversations.Append(context.WithoutCancel(ctx), ws, conv, llm.Assistant, text, uses)
		if serr != nil {
			c.o.Logger.Error("store the assistant's message", "conversation", conv, "err", serr)
		} else {
			res.MessageID = ex.ID
		}
	}
	if err != nil {
		return fail(l.code(ctx, err), l.describe(ctx, err))
	}
	send(Event{Type: Complete, MessageID: res.MessageID, Model: model.Name(), OwnKey: byok})
	return res, nil
}

// target is a turn's conversation: its id, its workspace, and whether it is
// stored yet.
type target struct {
	id, ws, owner string
	stored        bool
}

// resolve finds the turn's conversation id without writing anything: the
// one named (another user's is FORBIDDEN), or one to store once the turn is
// accepted, in the caller's default workspace (a new id, or one named that
// does not exist yet).
func (c *Chat) resolve(ctx context.Context, who principal.Principal, id string, named bool) (target, error) {
	tg := target{id: id, ws: c.o.Pipeline.DefaultWorkspace(who), owner: who.ID}
	if !named {
		return tg, nil
	}
	ws, owner, ok, err := c.o.Conversations.Lookup(ctx, id)
	if err != nil || !ok {
		return tg, err
	}
	if !who.MayUse(owner) {
		return tg, errs.E(errs.Forbidden, "conversation %q is another user's; start a new one", id)
	}
	tg.ws, tg.owner, tg.stored = ws, owner, true
	return tg, nil
}

// create stores the conversation of an accepted turn, the caller's. When
// another turn stored the same id meanwhile, that conversation is the
// turn's if the caller may use it.
func (c *Chat) create(ctx context.Context, who principal.Principal, platform string, tg *target) error {
	if platform == "" {
		platform = "chat"
	}
	_, err := c.o.Conversations.Create(ctx, conversation.Draft{ID: tg.id, Workspace: tg.ws, Platform: platform, OwnerID: who.ID, OwnerTier: who.Tier})
	if err == nil {
		tg.stored = true
		return nil
	}
	if !errors.Is(err, errs.Kind(errs.Conflict)) {
		return fmt.Errorf("store conversation %s: %w", tg.id, err)
	}
	ws, owner, ok, err := c.o.Conversations.Lookup(ctx, tg.id)
	switch {
	case err != nil:
		return fmt.Errorf("store conversation %s: %w", tg.id, err)
	case !ok:
		return fmt.Errorf("store conversation %s: deleted as it was made", tg.id)
	case !who.MayUse(owner):
		return errs.E(errs.Forbidden, "conversation %q is another user's; start a new one", tg.id)
	}
	tg.ws, tg.owner, tg.stored = ws, owner, true
	return nil
}

// historyLimit is how many earlier messages of a conversation a turn sends
// the model.
const historyLimit = 40

// history is the conversation's earlier user and assistant messages.
func (c *Chat) history(ctx context.Context, ws, conv string) ([]llm.Message, error) {
	ex, _, err := c.o.Conversations.Exchanges(ctx, ws, conv, historyLimit, -historyLimit)
	if err != nil {
		return nil, err
	}
	var out []llm.Message
	for _, e := range ex {
		if (e.Role == llm.User || e.Role == llm.Assistant) && e.Content != "" {
			out = append(out, llm.Message{Role: e.Role, Content: e.Content})
		}
	}
	return out, nil
}

// offered is a tool the model may call: the name it calls it by, the
// registry tool it runs.
type offered struct {
	spec llm.ToolSpec
	flat string
}

// loop is one turn's state.
type loop struct {
	c     *Chat
	ctx   context.Context
	who   principal.Principal
	conv  string
	ws    string
	owner string // the conversation's
	mode  string // tool approval (approval.go)
	send  func(Event)
	res   *Result
	mu    sync.Mutex
	tools map[string]offered
	order []string
	steps int
}

// offer starts the model with the named tools (flat names), or the bounded
// meta-tools, and the memory tools (Options.Memory), those the caller may
// use.
func (l *loop) offer(names []string) error {
	reg := l.c.o.Pipeline.Registry()
	var tools []*registry.Tool
	if len(names) > 0 {
		for _, n := range names {
			if t, ok := reg.Lookup(n); ok {
				tools = append(tools, t)
			}
		}
	} else {
		tools = reg.Listed(registry.MetaTools)
	}
	for _, n := range l.c.o.Memory {
		if t, ok := reg.Lookup(n); ok && !slices.Contains(names, n) {
			tools = append(tools, t)
		}
	}
	for _, t := range tools {
		if !l.c.o.Pipeline.Visible(l.ctx, t) {
			continue
		}
		schema := t.ListedSchemaJSON()
		l.add(t.Name(), offered{spec: llm.ToolSpec{Name: t.Name(), Description: t.Description, Schema: schema}, flat: t.Name()})
	}
	return nil
}

func (l *loop) add(name string, o offered) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.tools[name]; !ok {
		l.order = append(l.order, name)
	}
	l.tools[name] = o
}

func (l *loop) specs() []llm.ToolSpec {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]llm.ToolSpec, 0, len(l.order))
	for _, n := range l.order {
		out = append(out, l.tools[n].spec)
	}
	return out
}

// run asks the model until it answers without calling a tool, and returns
// the text of its last answer (every step's text, joined).
func (l *loop) run(model llm.Provider, system string, msgs []llm.Message) (string, error) {
	var all strings.Builder
	for {
		if l.steps >= l.c.o.MaxSteps {
			return all.String(), errStepLimit
		}
		l.steps++
		var text strings.Builder
		var calls []llm.ToolCall
		err := model.Stream(l.ctx, llm.Request{System: system, Messages: msgs, Tools: l.specs()}, func(e llm.Event) error {
			if e.Text != "" {
				text.WriteString(e.Text)
				all.WriteString(e.Text)
				l.send(Event{Type: Token, Content: e.Text})
			}
			if e.Call != nil {
				calls = append(calls, *e.Call)
			}
			return nil
		})
		if err != nil {
			return all.String(), err
		}
		if len(calls) == 0 {
			return all.String(), nil
		}
		msgs = append(msgs, llm.Message{Role: llm.Assistant, Content: text.String(), ToolCalls: calls})
		results := l.callAll(calls)
		msgs = append(msgs, results...)
		if err := l.ctx.Err(); err != nil {
			return all.String(), err
		}
	}
}

var errStepLimit = errors.New("step limit")

// callAll runs the model's tool calls concurrently and returns their
// results in the order of the calls.
func (l *loop) callAll(calls []llm.ToolCall) []llm.Message {
	out := make([]llm.Message, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = l.call(call)
		}()
	}
	wg.Wait()
	return out
}

// call runs one tool call through the pipeline, reporting its start and
// end; a call that needs the user's approval (approval.go) runs only once
// approved.
func (l *loop) call(call llm.ToolCall) llm.Message {
	l.mu.Lock()
	o, known := l.tools[call.Name]
	l.mu.Unlock()
	args := call.Args
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	flat := call.Name
	if known {
		flat = o.flat
	}
	// Resolved before it is announced: tool_start and tool_complete carry
	// the same source, the tool's actually run.
	source := l.source(flat, args)
	started := time.Now()
	l.send(Event{Type: ToolStart, ToolName: call.Name, ToolInput: string(args), Source: source, ToolCallID: call.ID, Timestamp: l.now()})
	var body []byte
	var isErr bool
	approved, why := true, ""
	if known && l.needsApproval(flat, args) {
		approved, why = l.approve(call.ID, call.Name, args, source)
	}
	switch {
	case !known:
		isErr = true
		body, _ = json.Marshal(map[string]any{"error": fmt.Sprintf("there is no tool %q here; call get_tools to discover tools", call.Name)})
	case !approved:
		// Not run: the model is told why, and the turn goes on.
		l.c.o.Logger.Info("tool call not approved: not run", "conversation", l.conv, "user", l.who.ID, "tool", flat, "tool_call_id", call.ID, "reason", why)
		isErr = true
		body, _ = json.Marshal(map[string]any{"error": why})
	default:
		oc := l.c.o.Pipeline.Call(l.ctx, pipeline.Request{Tool: flat, Args: args, Surface: "chat",
			Context: &pipeline.CallContext{SessionID: l.conv, WorkspaceID: l.ws}})
		body, isErr = oc.Body()
		if !isErr && (flat == "get_tools" || flat == "search_tools") {
			l.discover(body)
		}
	}
	l.send(Event{Type: ToolComplete, ToolName: call.Name, ToolResult: string(body), Source: source, ToolCallID: call.ID,
		IsError: isErr, Timestamp: l.now()})
	l.mu.Lock()
	l.res.ToolCalls++
	l.res.ToolUses = append(l.res.ToolUses, ToolUse{ID: call.ID, Name: call.Name, Tool: flat, Input: args, Result: string(body), Source: source,
		IsError: isErr, DurationMS: time.Since(started).Milliseconds()})
	l.mu.Unlock()
	return llm.Message{Role: llm.Tool, ToolCallID: call.ID, Content: string(body), IsError: isErr}
}

// useTool is the bounded meta-tool that runs another tool by its id.
const useTool = "use_tool"

// source is where the tool a call of flat runs lives: for use_tool, the
// tool its arguments name (a tool of a configured toolbox is a downstream
// server's, mcp, even before its toolbox is opened); else flat's own.
func (l *loop) source(flat string, args json.RawMessage) string {
	reg := l.c.o.Pipeline.Registry()
	if flat == useTool {
		if id, ok := useToolTarget(args); ok {
			if t, ok := reg.LookupID(id); ok {
				return string(t.Source)
			}
			if id.Toolbox != "" && id.Toolbox != registry.BuiltinToolbox {
				return string(registry.MCP)
			}
		}
	}
	if t, ok := reg.Lookup(flat); ok {
		return string(t.Source)
	}
	return string(registry.Local)
}

// useToolTarget is the id of the tool use_tool's arguments name.
func useToolTarget(args json.RawMessage) (registry.ID, bool) {
	var in struct {
		Tool struct {
			Toolbox, Server, Tool, Name string
		} `json:"tool"`
	}
	if json.Unmarshal(args, &in) != nil {
		return registry.ID{}, false
	}
	id := registry.ID{Toolbox: in.Tool.Toolbox, Server: in.Tool.Server, Tool: in.Tool.Tool}
	if id.Tool == "" {
		id.Tool = in.Tool.Name
	}
	return id, true
}

// discover offers the model the tools a get_tools or search_tools result
// describes, by their agent_mode names (a search_tools hit whose toolbox is
// not open here yet is not in the registry: get_tools opens it).
func (l *loop) discover(body []byte) {
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Toolbox     string          `json:"toolbox"`
			Server      string          `json:"server"`
			Tool        string          `json:"tool"`
		} `json:"tools"`
	}
	if json.Unmarshal(body, &res) != nil {
		return
	}
	for _, t := range res.Tools {
		flat := registry.ID{Toolbox: t.Toolbox, Server: t.Server, Tool: t.Tool}.Name()
		rt, ok := l.c.o.Pipeline.Registry().Lookup(flat)
		if !ok || !l.c.o.Pipeline.Visible(l.ctx, rt) {
			continue
		}
		desc, schema := t.Description, t.InputSchema
		if len(schema) == 0 {
			// A search_tools hit: its description is one line, its
			// schema the registry's.
			desc, schema = rt.Description, rt.ListedSchemaJSON()
		}
		l.add(t.Name, offered{spec: llm.ToolSpec{Name: t.Name, Description: desc, Schema: schema}, flat: flat})
	}
}

func (l *loop) now() string { return l.c.o.Now().UTC().Format(time.RFC3339Nano) }

// code is the error event's code for the turn's failure.
func (l *loop) code(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, errStepLimit):
		return StepLimit
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return TimeLimit
	case errors.Is(err, context.Canceled), ctx.Err() != nil:
		return Cancelled
	case llm.KindOf(err) == llm.RateLimited:
		return string(errs.RateLimited)
	}
	return ModelError
}

// describe says what ended the turn, for its error event.
func (l *loop) describe(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, errStepLimit):
		return fmt.Errorf("stopped after %d model steps without a final answer (the step limit); ask again more narrowly", l.c.o.MaxSteps)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("stopped after %s without a final answer (the time limit)", l.c.o.TurnTimeout)
	case errors.Is(err, context.Canceled), ctx.Err() != nil:
		return errors.New("cancelled")
	}
	var le *llm.Error
	if errors.As(err, &le) {
		e := errs.E(errs.Unavailable, "the model failed: %s", le.Error())
		if le.Kind == llm.RateLimited {
			e.Code = errs.RateLimited
			e.RetryAfter = int(le.RetryAfter.Seconds())
		}
		return e
	}
	return fmt.Errorf("the model failed: %w", err)
}
