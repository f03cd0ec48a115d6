package chat_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/chat"
	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/quota"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/users"
)

// forEachStore runs fn against Nexus on a fresh SQLite database and, when
// NEXUS_TEST_POSTGRES_URL is set, on a fresh PostgreSQL schema, with a fake
// OpenAI-compatible model answering by script.
func forEachStore(t *testing.T, script llmtest.Script, fn func(t *testing.T, a *app.App)) {
	t.Helper()
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			cfg := app.Config{DataDir: t.TempDir()}
			if dialect == "postgres" {
				cfg.DBURL = storetest.PostgresURL(t)
			}
			fake := llmtest.NewOpenAI(t, script)
			model, err := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: fake.URL, APIKey: "k", Model: "fake", Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Model = model
			a, err := app.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(a.Close)
			fn(t, a)
		})
	}
}

// rows counts the rows of each table named.
func rows(t *testing.T, a *app.App, tables ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, tb := range tables {
		var n int
		if err := a.Store.DB().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+tb).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", tb, err)
		}
		out[tb] = n
	}
	return out
}

// TestRefusedPromptWritesNothing: a prompt refused for its quota or for its
// content writes no conversation and no exchange, whether it starts a new
// conversation or names one that does not exist yet; tn_session_ask, which
// runs the same loop, writes nothing either when it refuses. The error
// event still names the conversation the turn would have had, and the
// first accepted turn creates it.
func TestRefusedPromptWritesNothing(t *testing.T) {
	forEachStore(t, func(int, *llmtest.Request) llmtest.Answer {
		return llmtest.Answer{Chunks: []string{"answered"}}
	}, func(t *testing.T, a *app.App) {
		ctx := context.Background()
		u, _, err := a.Users.Add(ctx, "ann", string(quota.Anonymous), principal.Member, "test")
		if err != nil {
			t.Fatal(err)
		}
		uctx := users.WithUser(ctx, u)
		// A tutoring session of hers, started before she ran out of prompts.
		o := a.Pipeline.Call(uctx, pipeline.Request{Tool: "tn_session_start", Surface: "test", Args: json.RawMessage(`{}`)})
		body, isErr := o.Body()
		if isErr {
			t.Fatalf("tn_session_start: %s", body)
		}
		var st struct{ SessionID string }
		json.Unmarshal(body, &st)
		// She has used every prompt of the day.
		q, err := quota.New(a.Store, quota.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		for range quota.DefaultLimits().Anonymous {
			if _, err := q.Admit(ctx, u.ID, quota.Anonymous, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		tables := []string{"conversations", "exchanges", "tn_asks"}
		before := rows(t, a, tables...)
		refused := []struct {
			name string
			turn chat.Turn
			code string
		}{
			{"new conversation over quota", chat.Turn{Content: "hi"}, "RATE_LIMITED"},
			{"named new conversation over quota", chat.Turn{ConversationID: "ann-chat-1", Content: "hi"}, "RATE_LIMITED"},
			{"empty content", chat.Turn{Content: "  "}, "BAD_REQUEST"},
		}
		for _, tc := range refused {
			ev, _, err := collect(t, uctx, a.Chat, tc.turn)
			last := ev[len(ev)-1]
			if err == nil || last.Type != chat.Error || last.Code != tc.code {
				t.Fatalf("%s: err %v, events %+v", tc.name, err, ev)
			}
			if last.ConversationID == "" || (tc.turn.ConversationID != "" && last.ConversationID != tc.turn.ConversationID) {
				t.Errorf("%s: the error event names conversation %q", tc.name, last.ConversationID)
			}
		}
		o = a.Pipeline.Call(uctx, pipeline.Request{Tool: "tn_session_ask", Surface: "test",
			Args: json.RawMessage(`{"sessionId":"` + st.SessionID + `","message":"Does CPSC 1150 transfer?","clientEventId":"e-1"}`)})
		if body, isErr := o.Body(); !isErr || o.Err.Code != "RATE_LIMITED" {
			t.Fatalf("tn_session_ask over quota: %s", body)
		}
		if after := rows(t, a, tables...); after["conversations"] != before["conversations"] || after["exchanges"] != before["exchanges"] ||
			after["tn_asks"] != before["tn_asks"] {
			t.Fatalf("refused prompts wrote rows: before %v, after %v", before, after)
		}
		// A user with prompts left: the first accepted turn creates the
		// conversation it names.
		b, _, err := a.Users.Add(ctx, "bea", string(quota.Free), principal.Member, "test")
		if err != nil {
			t.Fatal(err)
		}
		_, res, err := collect(t, users.WithUser(ctx, b), a.Chat, chat.Turn{ConversationID: "bea-chat-1", Content: "hi"})
		if err != nil || res.ConversationID != "bea-chat-1" || res.Text != "answered" {
			t.Fatalf("an accepted turn: %v %+v", err, res)
		}
		if after := rows(t, a, tables...); after["conversations"] != before["conversations"]+1 || after["exchanges"] != before["exchanges"]+2 {
			t.Fatalf("an accepted turn: before %v, after %v", before, after)
		}
	})
}
