package config

import (
	"slices"
	"time"
)

// Tool approval modes ([Chat.ToolApproval]); the chat loop defines the same
// values (chat.ApproveNever, ...).
const (
	// ApproveNever runs every tool call of a chat turn at once (the
	// default).
	ApproveNever = "never"
	// ApproveAlways asks the user before every tool call.
	ApproveAlways = "always"
	// ApproveWrites asks before every call of a tool not annotated
	// read-only.
	ApproveWrites = "writes"
)

// Bounds of the chat section's approvalTimeout.
const (
	DefaultApprovalTimeout = 120 * time.Second
	MaxApprovalTimeout     = time.Hour
)

// Chat configures the WebSocket chat (the Nexus format's chat section).
type Chat struct {
	// ToolApproval is the default tool approval of users who set none of
	// their own (tn_user_preferences_set toolApproval): ApproveNever (the
	// default), ApproveAlways or ApproveWrites.
	ToolApproval string
	// ApprovalTimeout bounds the wait for the user's answer to one tool
	// call (default DefaultApprovalTimeout, at most MaxApprovalTimeout).
	ApprovalTimeout time.Duration
}

var (
	chatKeys      = []string{"toolApproval", "approvalTimeout"}
	approvalModes = []string{ApproveNever, ApproveAlways, ApproveWrites}
)

// chat reads the chat section: toolApproval (never, always or writes) and
// approvalTimeout, each optional.
func (l *loader) chat(f field) *Chat {
	fields, ok := l.mapping(f.val, "chat", "a mapping with toolApproval (never, always or writes) and approvalTimeout")
	if !ok {
		return nil
	}
	c := &Chat{ToolApproval: ApproveNever, ApprovalTimeout: DefaultApprovalTimeout}
	n := len(l.errs) + l.dropped
	for _, sf := range fields {
		p := join("chat", sf.name)
		switch sf.name {
		case "toolApproval":
			if v, ok := l.str(sf, p); ok {
				if !slices.Contains(approvalModes, v) {
					l.fail(l.node(sf.val), p, "%q is not a tool approval mode: never (the default: tools run at once), always (ask before every tool call) "+
						"or writes (ask before calls of tools not annotated read-only)", v)
				}
				c.ToolApproval = v
			}
		case "approvalTimeout":
			if d, ok := l.duration(sf, p); ok {
				if d < time.Second || d > MaxApprovalTimeout {
					l.fail(l.node(sf.val), p, "must be from 1s to %s, not %s", MaxApprovalTimeout, d)
				}
				c.ApprovalTimeout = d
			}
		default:
			l.unknownKey(sf, "chat", chatKeys, "")
		}
	}
	if len(l.errs)+l.dropped > n {
		return nil
	}
	return c
}
