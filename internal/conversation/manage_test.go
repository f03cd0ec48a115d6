package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestRewindLastUser: the last user message and what followed it go, the
// earlier turns stay, the next exchange takes the user message's place
// (its sequence number), and a conversation without a user message is a
// bad request naming replace_last that changes nothing.
func TestRewindLastUser(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s := conversation.New(st)
		c, err := s.Create(ctx, conversation.Draft{Workspace: "default", Platform: "chat"})
		if err != nil {
			t.Fatal(err)
		}
		for i, role := range []string{"user", "assistant", "user", "assistant", "tool"} {
			if _, err := s.Append(ctx, "default", c.ID, role, fmt.Sprintf("%s %d", role, i), nil); err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.RewindLastUser(ctx, "default", c.ID)
		if err != nil || n != 3 {
			t.Fatalf("rewind: %d exchanges, %v; want 3", n, err)
		}
		ex, total, err := s.Exchanges(ctx, "default", c.ID, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		if total != 2 || len(ex) != 2 || ex[0].Content != "user 0" || ex[1].Content != "assistant 1" {
			t.Fatalf("after the rewind: %d of %d exchanges %+v, want user 0 and assistant 1", len(ex), total, ex)
		}
		next, err := s.Append(ctx, "default", c.ID, "user", "again", nil)
		if err != nil || next.Seq != 3 {
			t.Fatalf("the next exchange: %+v, %v; want sequence number 3", next, err)
		}

		empty, err := s.Create(ctx, conversation.Draft{Workspace: "default", Platform: "chat"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, "default", empty.ID, "assistant", "hello", nil); err != nil {
			t.Fatal(err)
		}
		var e *errs.Error
		if _, err := s.RewindLastUser(ctx, "default", empty.ID); !errors.As(err, &e) || e.Code != errs.BadRequest || e.Field != "replace_last" {
			t.Fatalf("rewinding a conversation without a user message: %v, want a bad request naming replace_last", err)
		}
		if _, total, _ := s.Exchanges(ctx, "default", empty.ID, 10, 0); total != 1 {
			t.Fatalf("a refused rewind left %d exchanges, want 1", total)
		}
		if _, err := s.RewindLastUser(ctx, "default", "no-such-conversation"); !errors.As(err, &e) || e.Code != errs.NotFound {
			t.Fatalf("rewinding an unknown conversation: %v, want not found", err)
		}
	})
}
