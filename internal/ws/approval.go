package ws

import (
	"encoding/json"
	"errors"

	"github.com/nexus-mcp/nexus/internal/chat"
	"github.com/nexus-mcp/nexus/internal/errs"
)

// Tool approval (issue 24): when the user's setting asks for it, the chat
// loop reports a tool call waiting for approval as
//
//	{"type":"approval_request","conversation_id","tool_call_id","tool_name","tool_input","source","timeout_seconds","timestamp"}
//
// right after its tool_start, and the client answers with
//
//	{"type":"approval","conversation_id":"...","tool_call_id":"...","approved":true|false}
//
// This surface only checks the frame's fields and hands the answer to the
// chat loop (chat.Chat.Answer), which decides whether the call is waiting and
// whether this connection's user may answer it: the user the turn runs as, or
// one who may use the conversation (a watching connection of the same
// replica). The waiting calls are this replica's: a turn runs where its
// socket is, and its answer comes over that socket; a connection watching
// from another replica cannot answer (its answer is refused as not
// waiting).

// approval answers a waiting tool call, or tells the client what is wrong
// with the frame (BAD_REQUEST).
func (s *conn) approval(in inbound) {
	refuse := func(msg string) {
		s.push(chat.Event{Type: chat.Error, Code: string(errs.BadRequest), ConversationID: in.ConversationID, ToolCallID: in.ToolCallID, Message: msg})
	}
	if in.ConversationID == "" {
		refuse("approval needs a conversation_id: the conversation_id of the approval_request it answers")
		return
	}
	if in.ToolCallID == "" {
		refuse("approval needs a tool_call_id: the tool_call_id of the approval_request it answers")
		return
	}
	if len(in.Approved) == 0 {
		refuse("approval needs approved: true runs the tool call, false denies it")
		return
	}
	var approved bool
	if err := json.Unmarshal(in.Approved, &approved); err != nil || string(in.Approved) == "null" {
		refuse("approved must be true or false, not " + string(in.Approved))
		return
	}
	u := s.current()
	if u == nil {
		refuse("not authenticated")
		return
	}
	if err := s.o.Chat.Answer(u.Principal(), in.ConversationID, in.ToolCallID, approved); err != nil {
		msg := err.Error()
		var e *errs.Error
		if errors.As(err, &e) {
			msg = e.Message
		}
		refuse(msg)
	}
}
