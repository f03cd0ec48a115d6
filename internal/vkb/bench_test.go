package vkb_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nexus-mcp/nexus/internal/conversation"
	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/substrate"
	"github.com/nexus-mcp/nexus/internal/vkb"
)

// Benchmarks of exchange_add and exchange_list with NEXUS_BENCH_EXCHANGES
// (default 1,000,000) exchanges in the store, in 1,000 conversations, with
// turn texts made from the Langara catalogue in ../shared/data. SQLite
// databases are kept in NEXUS_BENCH_DIR and reused; PostgreSQL runs when
// NEXUS_TEST_POSTGRES_URL is set.

const benchConversations = 1000

func benchExchanges() int {
	if v, err := strconv.Atoi(os.Getenv("NEXUS_BENCH_EXCHANGES")); err == nil && v > 0 {
		return v
	}
	return 1_000_000
}

func turnTexts(b *testing.B) []string {
	dir := os.Getenv("NEXUS_SHARED_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "data")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "langara", "catalogue.json"))
	if err != nil {
		b.Fatalf("read shared data (set NEXUS_SHARED_DATA): %v", err)
	}
	var cat struct {
		Courses []struct {
			Subject, Title, Description string
			CourseCode                  int `json:"course_code"`
		}
	}
	if err := json.Unmarshal(raw, &cat); err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, c := range cat.Courses {
		out = append(out, fmt.Sprintf("Does %s %d (%s) transfer, and what does it cover?", c.Subject, c.CourseCode, c.Title))
		out = append(out, strings.Join(strings.Fields(c.Description), " "))
	}
	return out
}

func openBenchStore(b *testing.B, d store.Dialect) *store.Store {
	return storetest.OpenBench(b, d, fmt.Sprintf("exchanges-%d", benchExchanges()))
}

// loadExchanges fills the store with n exchanges over benchConversations
// conversations, in bulk transactions.
func loadExchanges(b *testing.B, st *store.Store) []string {
	ctx := context.Background()
	n := benchExchanges()
	ids := make([]string, benchConversations)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench-%04d", i)
	}
	var have int
	st.DB().QueryRow(`SELECT COUNT(*) FROM exchanges`).Scan(&have)
	if have >= n {
		return ids
	}
	start := time.Now()
	texts := turnTexts(b)
	per := n / benchConversations
	now := time.Now().Add(-24 * time.Hour)
	for ci, id := range ids {
		err := st.Tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, st.Q(`INSERT INTO conversations (id, workspace, platform, metadata, status, themes,
				created_at, updated_at, exchange_count) VALUES (?, 'default', 'api', '{}', 'active', '[]', ?, ?, ?)`),
				id, store.Micros(now), store.Micros(now), per); err != nil {
				return err
			}
			stmt, err := tx.PrepareContext(ctx, st.Q(`INSERT INTO exchanges (id, conversation_id, workspace, seq, role, content, tool_uses, created_at)
				VALUES (?, ?, 'default', ?, ?, ?, '[]', ?)`))
			if err != nil {
				return err
			}
			defer stmt.Close()
			for seq := 1; seq <= per; seq++ {
				role := "user"
				if seq%2 == 0 {
					role = "assistant"
				}
				eid, _ := uuid.NewV7()
				if _, err := stmt.ExecContext(ctx, eid.String(), id, seq, role, texts[(ci*per+seq)%len(texts)], store.Micros(now)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if st.Dialect() == store.Postgres {
		st.DB().Exec(`VACUUM ANALYZE`)
	}
	b.Logf("loaded %d exchanges into %s in %v", n, st.Dialect(), time.Since(start).Round(time.Second))
	return ids
}

func benchVKB(b *testing.B, st *store.Store) *pipeline.Pipeline { return benchVKBVectors(b, st, nil) }

// benchVKBVectors is benchVKB with exchange_search hybrid over ix (when
// not nil).
func benchVKBVectors(b *testing.B, st *store.Store, ix *embed.Index) *pipeline.Pipeline {
	reg := registry.New()
	sub := substrate.New(st, nil)
	conv := conversation.New(st)
	if ix != nil {
		conv.UseVectors(ix)
	}
	sub.Register(reg)
	if err := vkb.New(st, conv, sub, nil).Register(reg); err != nil {
		b.Fatal(err)
	}
	return pipeline.New(pipeline.Options{Registry: reg, Sessions: conv})
}

func BenchmarkExchanges(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			st := openBenchStore(b, d)
			ids := loadExchanges(b, st)
			p := benchVKB(b, st)
			texts := turnTexts(b)
			rng := rand.New(rand.NewPCG(3, 4))
			ctx := context.Background()
			call := func(tool string, args map[string]any) time.Duration {
				raw, _ := json.Marshal(args)
				t0 := time.Now()
				o := p.Call(ctx, pipeline.Request{Tool: tool, Args: raw, Transport: "bench"})
				d := time.Since(t0)
				if o.Err != nil {
					b.Fatal(o.Err)
				}
				return d
			}
			b.Run("exchange_add", func(b *testing.B) {
				ds := make([]time.Duration, 0, b.N)
				for i := 0; i < b.N; i++ {
					ds = append(ds, call("exchange_add", map[string]any{"session_id": ids[rng.IntN(len(ids))], "role": "user", "content": texts[rng.IntN(len(texts))]}))
				}
				storetest.ReportLatencies(b, ds)
			})
			b.Run("exchange_list", func(b *testing.B) {
				per := benchExchanges() / benchConversations
				ds := make([]time.Duration, 0, b.N)
				for i := 0; i < b.N; i++ {
					ds = append(ds, call("exchange_list", map[string]any{"session_id": ids[rng.IntN(len(ids))], "limit": 50, "offset": rng.IntN(max(1, per-50))}))
				}
				storetest.ReportLatencies(b, ds)
			})
		})
	}
}
