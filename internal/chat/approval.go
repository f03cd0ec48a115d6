package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/registry"
)

// Tool approval (issue 24): a user may ask to approve tool calls before they
// run. When a call needs approval the loop reports it (tool_start, then
// approval_request) and waits, without running it, for the user's answer
// ([Chat.Answer]), the turn's end, or [Options.ApprovalTimeout]. Approved,
// the call runs through the pipeline as any other; denied or unanswered, it
// is not run and the model gets a tool error saying why, and the turn goes
// on. The gate sits here, before the pipeline, so every surface that lets
// its user answer (Turn.Approvable) gets the same rule.
//
// The waiting calls are kept in this process: a turn runs on the replica
// holding the socket that started it, and its answers come back over that
// socket (or another socket of this replica whose user may use the
// conversation).

// ApprovalRequest is the event type of a tool call waiting for the user's
// approval (tool_name, tool_input and source as its tool_start's, and
// timeout_seconds).
const ApprovalRequest = "approval_request"

// Tool approval modes: which tool calls of a user's turns wait for their
// approval.
const (
	// ApproveNever runs every call at once (the default).
	ApproveNever = "never"
	// ApproveAlways asks before every call.
	ApproveAlways = "always"
	// ApproveWrites asks before every call whose tool is not read-only
	// (registry.Tool.ReadOnly: a local tool marked so, or a downstream tool
	// annotated readOnlyHint true); a tool without annotations, or not known
	// yet, counts as a write.
	ApproveWrites = "writes"
)

// ApprovalModes returns the tool approval modes, the default first (a new
// slice each time: no package state to change).
func ApprovalModes() []string { return []string{ApproveNever, ApproveAlways, ApproveWrites} }

// ValidApprovalMode reports whether mode is one of [ApprovalModes].
func ValidApprovalMode(mode string) bool { return slices.Contains(ApprovalModes(), mode) }

// DefaultApprovalTimeout is how long a call waits for its approval when
// Options.ApprovalTimeout is not set.
const DefaultApprovalTimeout = 120 * time.Second

// Texts of the tool error a call that was not approved returns to the model.
const (
	deniedText = "the user denied this tool call"
	timeoutFmt = "no approval within %d s"
)

// ApprovalFunc returns the tool approval mode of who's turns: one of
// [ApprovalModes] (their own setting, else the server's default); empty
// means [ApproveNever].
type ApprovalFunc func(ctx context.Context, who principal.Principal) (string, error)

// waiting are the tool calls of this process's turns waiting for an answer,
// by conversation and tool call id.
type waiting struct {
	mu    sync.Mutex
	calls map[waitKey]*pending
}

type waitKey struct{ conv, call string }

// pending is one call waiting for its approval.
type pending struct {
	user   string // who the turn runs as
	owner  string // the conversation's owner
	answer chan bool
}

// Answer answers the approval_request of tool call callID in conversation
// conv on behalf of who: approved runs the call, else it is denied. who must
// be the user the turn runs as, or one who may use the conversation
// (principal.MayUse). A call that is not waiting (never asked, answered
// already, timed out, or another user's) is a BAD_REQUEST saying so.
func (c *Chat) Answer(who principal.Principal, conv, callID string, approved bool) error {
	w := &c.waiting
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.calls[waitKey{conv, callID}]
	if p != nil && p.user != who.ID && !who.MayUse(p.owner) {
		p = nil // another user's call looks like none at all
	}
	if p == nil {
		var ids []string
		for k, q := range w.calls {
			if k.conv == conv && (q.user == who.ID || who.MayUse(q.owner)) {
				ids = append(ids, quoted(k.call))
			}
		}
		if len(ids) == 0 {
			return errs.E(errs.BadRequest, "no tool call of conversation %s is waiting for approval (answered already, timed out, or never asked)", quoted(conv))
		}
		slices.Sort(ids)
		return errs.E(errs.BadRequest, "unknown tool_call_id %s: the tool calls of conversation %s waiting for approval are %s",
			quoted(callID), quoted(conv), strings.Join(ids, ", "))
	}
	delete(w.calls, waitKey{conv, callID})
	p.answer <- approved // buffered: the waiting call reads it
	return nil
}

// wait registers a call waiting for its answer; done unregisters it (an
// answer given after done is refused as not waiting) and reports whether it
// was still waiting: false means it was answered, on answer.
func (w *waiting) wait(conv, callID, user, owner string) (answer <-chan bool, done func() bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := waitKey{conv, callID}
	if _, dup := w.calls[k]; dup {
		return nil, nil, fmt.Errorf("tool call %s of conversation %s waits for approval already", quoted(callID), quoted(conv))
	}
	if w.calls == nil {
		w.calls = map[waitKey]*pending{}
	}
	p := &pending{user: user, owner: owner, answer: make(chan bool, 1)}
	w.calls[k] = p
	return p.answer, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.calls[k] == p {
			delete(w.calls, k)
			return true
		}
		return false
	}, nil
}

// approvalMode is the mode of who's turn: never when the surface cannot
// deliver answers (not approvable) or none is configured.
func (c *Chat) approvalMode(ctx context.Context, who principal.Principal, approvable bool) (string, error) {
	if !approvable || c.o.Approval == nil {
		return ApproveNever, nil
	}
	mode, err := c.o.Approval(ctx, who)
	switch {
	case err != nil:
		return "", fmt.Errorf("read the tool approval setting: %w", err)
	case mode == "":
		return ApproveNever, nil
	case !ValidApprovalMode(mode):
		return "", fmt.Errorf("the tool approval setting %s is not one of %s", quoted(mode), strings.Join(ApprovalModes(), ", "))
	}
	return mode, nil
}

// needsApproval reports whether a call of flat with args waits for the
// user's approval in the turn's mode: in writes mode, unless the tool it
// runs (for use_tool, the tool its arguments name) is read-only.
func (l *loop) needsApproval(flat string, args json.RawMessage) bool {
	switch l.mode {
	case ApproveAlways:
		return true
	case ApproveWrites:
		t, ok := l.runs(flat, args)
		return !ok || !t.ReadOnly
	}
	return false
}

// runs is the registry tool a call of flat with args runs: for use_tool,
// the tool its arguments name; ok false when it is not known (yet).
func (l *loop) runs(flat string, args json.RawMessage) (*registry.Tool, bool) {
	reg := l.c.o.Pipeline.Registry()
	if flat == useTool {
		id, ok := useToolTarget(args)
		if !ok {
			return nil, false
		}
		return reg.LookupID(id)
	}
	return reg.Lookup(flat)
}

// approve waits for the user's answer to a call that needs approval, having
// reported it: ok true when approved; else why it was not run (denied, no
// answer in time, or the turn ended while it waited).
func (l *loop) approve(callID, name string, args json.RawMessage, source string) (ok bool, why string) {
	timeout := l.c.o.ApprovalTimeout
	secs := int(math.Ceil(timeout.Seconds()))
	answer, done, err := l.c.waiting.wait(l.conv, callID, l.who.ID, l.owner)
	if err != nil {
		return false, err.Error()
	}
	l.send(Event{Type: ApprovalRequest, ToolName: name, ToolInput: string(args), Source: source, ToolCallID: callID,
		TimeoutSeconds: secs, Timestamp: l.now()})
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case yes := <-answer:
		return answered(yes)
	case <-timer.C:
		if !done() {
			// Answered as the time ran out: the answer was accepted, so
			// it counts.
			return answered(<-answer)
		}
		return false, fmt.Sprintf(timeoutFmt, secs)
	case <-l.ctx.Done():
		done()
		return false, "the turn ended while this tool call waited for approval"
	}
}

// answered is approve's outcome for an answer.
func answered(yes bool) (bool, string) {
	if !yes {
		return false, deniedText
	}
	return true, ""
}

func quoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
