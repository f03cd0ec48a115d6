package config

import (
	"strings"
	"testing"
	"time"
)

// TestChatSection: the chat section sets the default tool approval and the
// wait for an answer; a bad value is refused naming the key and the values
// allowed.
func TestChatSection(t *testing.T) {
	cfg, err := Parse("c.yaml", []byte("toolboxes: {}\nchat:\n  toolApproval: writes\n  approvalTimeout: 30s\n"), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Chat; got == nil || got.ToolApproval != ApproveWrites || got.ApprovalTimeout != 30*time.Second {
		t.Fatalf("chat: %+v", got)
	}
	cfg, err = Parse("c.yaml", []byte("toolboxes: {}\nchat: {toolApproval: always}\n"), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Chat; got == nil || got.ToolApproval != ApproveAlways || got.ApprovalTimeout != DefaultApprovalTimeout {
		t.Fatalf("defaults: %+v", got)
	}
	for _, c := range []struct{ yaml, want string }{
		{"chat: {toolApproval: sometimes}", `chat.toolApproval: "sometimes" is not a tool approval mode: never`},
		{"chat: {toolApproval: never, approvalTimeout: soon}", "chat.approvalTimeout"},
		{"chat: {approvalTimeout: 500ms}", "chat.approvalTimeout: must be from 1s to 1h0m0s, not 500ms"},
		{"chat: {approvalTimeout: 2h}", "chat.approvalTimeout: must be from 1s to 1h0m0s, not 2h0m0s"},
		{"chat: {tool_approval: always}", `unknown key "tool_approval"`},
		{"chat: always", "chat"},
	} {
		_, err := Parse("c.yaml", []byte("toolboxes: {}\n"+c.yaml+"\n"), envOf(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.yaml, err, c.want)
		}
	}
	cfg, err = Parse("c.yaml", []byte("toolboxes: {}\n"), envOf(nil))
	if err != nil || cfg.Chat != nil {
		t.Errorf("no section: %+v %v", cfg.Chat, err)
	}
}
