package vkb_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/embed/embedtest"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/substrate"
	"github.com/nexus-mcp/nexus/internal/vkb"
)

// syncBuf is a log sink safe for concurrent writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestHybridExchangeSearch: exchanges written before any vector exists are
// backfilled by the embedding job against the fake provider (OpenAI's wire
// format), and exchange_search finds by meaning an exchange that shares no
// word with the query, under the workspace, session and window filters; an
// exchange_add wakes the running job; with the provider down the lexical
// results still come and the failure is logged.
func TestHybridExchangeSearch(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		fake := embedtest.New(t)
		logs := &syncBuf{}
		log := slog.New(slog.NewTextHandler(logs, nil))
		e, err := embed.New(embed.Settings{Provider: "openai", BaseURL: fake.OpenAIURL(), Model: "fake-embed", MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		ix := embed.NewIndex(st, e, embed.Options{Logger: log, Sources: []embed.Source{embed.ExchangeSource},
			Cooldown: time.Millisecond, Interval: time.Hour, FullEvery: time.Hour})
		reg := registry.New()
		sub := substrate.New(st, log)
		conv := conversation.New(st)
		if err := sub.Register(reg); err != nil {
			t.Fatal(err)
		}
		if err := vkb.New(st, conv, sub, log).Register(reg); err != nil {
			t.Fatal(err)
		}
		p := pipeline.New(pipeline.Options{Registry: reg, Sessions: conv})
		h := pipelinetest.Valence{T: t, St: st, P: p, Transport: "test"}.In("hybrid-ws")
		away := pipelinetest.Valence{T: t, St: st, P: p, Transport: "test"}.In("hybrid-away")

		start := func(v pipelinetest.Valence) string {
			return obj(v.Call("session_start", map[string]any{"platform": "api"})["session"])["id"].(string)
		}
		add := func(v pipelinetest.Valence, id, content, at string) string {
			args := map[string]any{"session_id": id, "role": "user", "content": content}
			if at != "" {
				args["created_at"] = at
			}
			return obj(v.Call("exchange_add", args)["exchange"])["id"].(string)
		}
		// Written before any vector exists (an existing history).
		s1 := start(h)
		auto := add(h, s1, "Maria bought an automobile last spring", "2023-05-01T10:00:00Z")
		add(h, s1, "The quarterly report shows revenue growth", "2023-05-01T10:01:00Z")
		s2 := start(h)
		dealer := add(h, s2, "The car dealership opens at nine", "2023-07-01T10:00:00Z")
		add(h, s2, "Tom prefers tea over coffee", "2023-07-01T10:01:00Z")
		as := start(away)
		awayAuto := add(away, as, "Someone bought an automobile", "")

		search := func(args map[string]any) []string {
			t.Helper()
			var out []string
			for _, hit := range arr(h.Call("exchange_search", args)["hits"]) {
				out = append(out, obj(obj(hit)["exchange"])["id"].(string))
			}
			return out
		}
		// Lexical only: "vehicle purchase" shares no word with any exchange.
		if got := search(map[string]any{"query": "vehicle purchase"}); len(got) != 0 {
			t.Fatalf("lexical: %v, want nothing", got)
		}
		conv.UseVectors(ix)
		if err := ix.Backfill(ctx); err != nil {
			t.Fatal(err)
		}
		got := search(map[string]any{"query": "vehicle purchase", "context_turns": 0})
		if len(got) == 0 || got[0] != auto {
			t.Fatalf("hybrid: %v, want the automobile purchase %s first (no word shared, close by meaning)", got, auto)
		}
		for _, id := range got {
			if id == awayAuto {
				t.Errorf("a vector hit from another workspace: %v", got)
			}
		}
		// The session and window filters apply to vector hits.
		for _, args := range []map[string]any{
			{"query": "vehicle purchase", "session_id": s2},
			{"query": "vehicle purchase", "valid_after": "2023-06-01T00:00:00Z"},
		} {
			for _, id := range search(args) {
				if id == auto {
					t.Errorf("%v: the automobile exchange is outside the filters: %v", args, got)
				}
			}
		}
		// Fusion: "car" matches the dealership lexically and by vector, the
		// automobile by vector only: the dealership first, scored 1; the
		// automobile is found, scored about half (first in one ranking:
		// the turn after the dealership ties with it lexically).
		res := h.Call("exchange_search", map[string]any{"query": "car", "context_turns": 0})
		hits := arr(res["hits"])
		if len(hits) < 2 || obj(obj(hits[0])["exchange"])["id"] != dealer || obj(hits[0])["score"] != 1.0 {
			t.Fatalf("car: %v, want the dealership (both rankings) first, scored 1", hits)
		}
		found := false
		for _, hit := range hits[1:] {
			if obj(obj(hit)["exchange"])["id"] == auto {
				found = true
				if sc := obj(hit)["score"].(float64); sc <= 0 || sc >= 1 {
					t.Errorf("automobile (vector only) scored %v", sc)
				}
			}
		}
		if !found {
			t.Errorf("car: %v, want the automobile through its vector", hits)
		}

		// exchange_add wakes the running job (its interval is an hour).
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			ix.Run(runCtx)
		}()
		defer func() {
			cancel()
			<-done
		}()
		if got := search(map[string]any{"query": "doctor"}); len(got) != 0 {
			t.Fatalf("doctor before: %v", got)
		}
		lee := add(h, s1, "Dr. Lee is a physician", "")
		deadline := time.Now().Add(30 * time.Second)
		for {
			if got := search(map[string]any{"query": "doctor"}); len(got) == 1 && got[0] == lee {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the new exchange was not embedded: the append did not wake the job (logs: %s)", logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		<-done

		// The provider down: lexical results, the failure logged, no error.
		fake.Down(http.StatusServiceUnavailable)
		got = search(map[string]any{"query": "car dealership", "context_turns": 0})
		if len(got) == 0 || got[0] != dealer || slices.Contains(got, auto) {
			t.Fatalf("provider down: %v, want the lexical results (the dealership, not the automobile)", got)
		}
		if !strings.Contains(logs.String(), "vector side failed") {
			t.Errorf("the failure was not logged: %s", logs.String())
		}
	})
}

// TestHybridExchangeSearchOwners: the vector side keeps a user who is not
// an admin to the conversations they started, as the lexical side does.
func TestHybridExchangeSearchOwners(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		fake := embedtest.New(t)
		e, err := embed.New(embed.Settings{Provider: "openai", BaseURL: fake.OpenAIURL(), Model: "fake-embed", MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		ix := embed.NewIndex(st, e, embed.Options{Sources: []embed.Source{embed.ExchangeSource}})
		reg := registry.New()
		sub := substrate.New(st, nil)
		conv := conversation.New(st)
		conv.UseVectors(ix)
		if err := sub.Register(reg); err != nil {
			t.Fatal(err)
		}
		if err := vkb.New(st, conv, sub, nil).Register(reg); err != nil {
			t.Fatal(err)
		}
		who := principal.Principal{ID: "alice", Role: principal.Member}
		p := pipeline.New(pipeline.Options{Registry: reg, Sessions: conv,
			Principal: func(context.Context) (principal.Principal, bool) { return who, true }})
		h := pipelinetest.Valence{T: t, St: st, P: p, Transport: "test"}.In("owners-hybrid")
		say := func(content string) string {
			id := obj(h.Call("session_start", map[string]any{"platform": "api"})["session"])["id"].(string)
			return obj(h.Call("exchange_add", map[string]any{"session_id": id, "role": "user", "content": content})["exchange"])["id"].(string)
		}
		alices := say("We bought a big house")
		who = principal.Principal{ID: "bob", Role: principal.Member}
		bobs := say("They bought a big house too")
		if err := ix.Backfill(context.Background()); err != nil {
			t.Fatal(err)
		}
		found := func() []string {
			var out []string
			for _, x := range arr(h.Call("exchange_search", map[string]any{"query": "purchase large home"})["hits"]) {
				out = append(out, obj(obj(x)["exchange"])["id"].(string))
			}
			return out
		}
		if got := found(); !slices.Equal(got, []string{bobs}) {
			t.Errorf("bob finds %v, want his exchange %s only (by its vector)", got, bobs)
		}
		who = principal.Principal{ID: "root", Role: principal.Admin}
		if got := found(); len(got) != 2 || !slices.Contains(got, alices) {
			t.Errorf("an admin finds %v, want both", got)
		}
	})
}
