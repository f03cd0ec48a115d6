package substrate_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/embed/embedtest"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/substrate"
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

// TestHybridBeliefQuery: beliefs created, backfilled by the embedding job,
// and belief_query finds by meaning a belief that shares no word with the
// query, ranked by reciprocal rank fusion; with the provider down the
// lexical results still come and the failure is logged.
func TestHybridBeliefQuery(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		fake := embedtest.New(t)
		logs := &syncBuf{}
		log := slog.New(slog.NewTextHandler(logs, nil))
		e, err := embed.New(embed.Settings{Provider: "openai", BaseURL: fake.OpenAIURL(), Model: "fake-embed", MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		ix := embed.NewIndex(st, e, embed.Options{Logger: log, Sources: []embed.Source{embed.BeliefSource}, Cooldown: time.Millisecond})
		sub := substrate.New(st, log)
		reg := registry.New()
		if err := sub.Register(reg); err != nil {
			t.Fatal(err)
		}
		h := pipelinetest.Valence{T: t, St: st, P: pipeline.New(pipeline.Options{Registry: reg})}

		// Created before any vector exists (an existing knowledge base).
		for _, c := range []string{
			"Maria bought an automobile last spring",
			"The quarterly report shows revenue growth",
			"Tom prefers tea over coffee",
			"The car dealership opens at nine",
		} {
			h.Call("belief_create", map[string]any{"content": c})
		}
		query := func(q string) []string {
			res := h.Call("belief_query", map[string]any{"query": q, "limit": 5})
			var out []string
			for _, b := range arr(res["beliefs"]) {
				out = append(out, obj(b)["content"].(string))
			}
			return out
		}
		// Lexical only: "vehicle purchase" shares no word with any belief.
		if got := query("vehicle purchase"); len(got) != 0 {
			t.Fatalf("lexical: %v, want nothing", got)
		}
		sub.UseVectors(ix)
		if err := ix.Backfill(ctx); err != nil {
			t.Fatal(err)
		}
		got := query("vehicle purchase")
		if len(got) == 0 || got[0] != "Maria bought an automobile last spring" {
			t.Fatalf("hybrid: %v, want the automobile purchase first (no word shared, close by meaning)", got)
		}
		for _, c := range got {
			if strings.Contains(c, "tea") || strings.Contains(c, "revenue") {
				t.Errorf("unrelated belief in hybrid results: %v", got)
			}
		}
		// Fusion: "car" matches the dealership lexically and by vector, and
		// the automobile belief by vector only: the dealership is first.
		res := h.Call("belief_query", map[string]any{"query": "car", "limit": 5})
		bs := arr(res["beliefs"])
		if len(bs) < 2 || obj(bs[0])["content"] != "The car dealership opens at nine" || obj(bs[1])["content"] != "Maria bought an automobile last spring" {
			t.Fatalf("car: %v, want the dealership (both rankings) then the automobile (vector only)", bs)
		}
		if s0, s1 := obj(bs[0])["relevance_score"].(float64), obj(bs[1])["relevance_score"].(float64); s0 != 1 || s1 >= s0 || s1 <= 0 {
			t.Errorf("relevance scores %v, %v: want 1 (first in both) then less", s0, s1)
		}
		if res["total_count"].(float64) != 2 {
			t.Errorf("total_count %v, want 2 (one lexical, one more by vector)", res["total_count"])
		}

		// A belief created while the job is not running is not found by
		// meaning until the backfill catches up.
		h.Call("belief_create", map[string]any{"content": "Dr. Lee is a physician"})
		if got := query("doctor"); len(got) != 0 {
			t.Fatalf("before its vector: %v", got)
		}
		if err := ix.Backfill(ctx); err != nil {
			t.Fatal(err)
		}
		if got := query("doctor"); len(got) != 1 || got[0] != "Dr. Lee is a physician" {
			t.Fatalf("after the backfill: %v", got)
		}

		// The provider down: lexical results, the failure logged, no error.
		fake.Down(http.StatusServiceUnavailable)
		got = query("car dealership")
		if len(got) != 1 || got[0] != "The car dealership opens at nine" {
			t.Fatalf("provider down: %v, want the lexical result", got)
		}
		if !strings.Contains(logs.String(), "vector side failed") {
			t.Errorf("the failure was not logged: %s", logs.String())
		}
	})
}

// BenchmarkHybridBeliefQuery is belief_query over 2,000 beliefs on SQLite,
// lexical and hybrid (the fake provider over loopback HTTP, vectors cached):
// the difference is hybrid search's extra cost per query.
func BenchmarkHybridBeliefQuery(b *testing.B) {
	st := storetest.OpenTestSQLite(b)
	fake := embedtest.New(b)
	e, err := embed.New(embed.Settings{Provider: "openai", BaseURL: fake.OpenAIURL(), Model: "fake-embed"})
	if err != nil {
		b.Fatal(err)
	}
	ix := embed.NewIndex(st, e, embed.Options{Sources: []embed.Source{embed.BeliefSource}})
	sub := substrate.New(st, nil)
	reg := registry.New()
	if err := sub.Register(reg); err != nil {
		b.Fatal(err)
	}
	h := pipelinetest.Valence{T: b, St: st, P: pipeline.New(pipeline.Options{Registry: reg})}
	words := []string{"car", "doctor", "house", "film", "report", "revenue", "coffee", "garden", "river", "train", "school", "market"}
	items := make([]any, 0, 1000)
	for i := range 2000 {
		items = append(items, map[string]any{"content": fmt.Sprintf("note %d about the %s and the %s near the %s", i, words[i%12], words[(i/12)%12], words[(i/144)%12])})
		if len(items) == 1000 {
			h.Call("belief_create_batch", map[string]any{"beliefs": items})
			items = items[:0]
		}
	}
	if err := ix.Backfill(context.Background()); err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"query": "automobile near the river", "limit": 10}
	b.Run("lexical", func(b *testing.B) {
		for b.Loop() {
			h.Call("belief_query", args)
		}
	})
	sub.UseVectors(ix)
	b.Run("hybrid", func(b *testing.B) {
		for b.Loop() {
			h.Call("belief_query", args)
		}
	})
}
