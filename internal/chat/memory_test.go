package chat_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/chat"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/users"
)

// TestMemoryToolOffered: the chat and tn_session_ask start the model with
// exchange_search besides their own tools, and a scripted call of it from
// a new conversation finds what the user said in an earlier one.
func TestMemoryToolOffered(t *testing.T) {
	forEachStore(t, func(n int, req *llmtest.Request) llmtest.Answer {
		names := req.ToolNames()
		if !slices.Contains(names, "exchange_search") {
			t.Errorf("request %d: tools %v, want exchange_search among them", n, names)
		}
		switch n {
		case 1: // the chat: the meta-tools and the memory tool
			if !slices.Contains(names, "get_tools") {
				t.Errorf("chat tools %v, want the meta-tools too", names)
			}
			return llmtest.Answer{Chunks: []string{"Noted."}}
		case 2:
			return llmtest.Answer{Calls: []llmtest.Call{{ID: "m1", Name: "exchange_search", Args: `{"query":"favourite volcano"}`}}}
		case 3:
			res := req.LastToolResults()["m1"]
			var out struct {
				Hits []struct {
					Exchange struct{ Content string } `json:"exchange"`
				} `json:"hits"`
			}
			if err := json.Unmarshal([]byte(res), &out); err != nil || len(out.Hits) == 0 ||
				out.Hits[0].Exchange.Content != "My favourite volcano is Mount Baker" {
				t.Errorf("exchange_search result %s: want the earlier turn first", res)
			}
			return llmtest.Answer{Chunks: []string{"Mount Baker."}}
		default: // tn_session_ask: the tutor's tools and the memory tool
			if !slices.Contains(names, "tn_course_search") {
				t.Errorf("tn_session_ask tools %v, want the tutor's too", names)
			}
			return llmtest.Answer{Chunks: []string{"Yes."}}
		}
	}, func(t *testing.T, a *app.App) {
		ctx := context.Background()
		u, _, err := a.Users.Add(ctx, "ann", string(quota.Paid), principal.Member, "test")
		if err != nil {
			t.Fatal(err)
		}
		uctx := users.WithUser(ctx, u)
		if _, _, err := collect(t, uctx, a.Chat, chat.Turn{Content: "My favourite volcano is Mount Baker"}); err != nil {
			t.Fatal(err)
		}
		ev, res, err := collect(t, uctx, a.Chat, chat.Turn{Content: "Which volcano do I like?"})
		if err != nil {
			t.Fatalf("turn: %v (events %v)", err, types(ev))
		}
		if res.Text != "Mount Baker." || len(res.ToolUses) != 1 || res.ToolUses[0].Tool != "exchange_search" || res.ToolUses[0].IsError {
			t.Errorf("second turn: %q, tool uses %+v", res.Text, res.ToolUses)
		}
		o := a.Pipeline.Call(uctx, pipeline.Request{Tool: "tn_session_start", Surface: "test", Args: json.RawMessage(`{}`)})
		body, isErr := o.Body()
		if isErr {
			t.Fatalf("tn_session_start: %s", body)
		}
		var st struct{ SessionID string }
		json.Unmarshal(body, &st)
		o = a.Pipeline.Call(uctx, pipeline.Request{Tool: "tn_session_ask", Surface: "test",
			Args: json.RawMessage(`{"sessionId":"` + st.SessionID + `","message":"Does CPSC 1150 transfer?"}`)})
		if body, isErr := o.Body(); isErr || !strings.Contains(string(body), "Yes.") {
			t.Fatalf("tn_session_ask: %s", body)
		}
	})
}
