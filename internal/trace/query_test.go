package trace_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/errs"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/trace"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// seed stores n records r000, r001, ... in that order: every third one is a
// downstream tool's, every fifth an error, sessions alternate between s0 and
// s1 (every seventh has none), workspaces between w0 and w1.
func seed(t *testing.T, s *store.Store, n int, base time.Time) {
	t.Helper()
	w := trace.NewWriter(s, slog.New(slog.DiscardHandler))
	defer w.Close()
	for i := range n {
		r := trace.Record{
			RequestID: fmt.Sprintf("r%03d", i), Surface: "test", Toolbox: "nexus", Server: "substrate", Tool: "belief_get",
			Source: "local", SessionID: fmt.Sprintf("s%d", i%2), Workspace: fmt.Sprintf("w%d", i%2),
			StartedAt: base.Add(time.Duration(i) * time.Second), Duration: time.Duration(i) * time.Microsecond,
			Outcome: trace.OK, ArgsBytes: i, ResultBytes: 2 * i,
		}
		if i%3 == 0 {
			r.Toolbox, r.Server, r.Tool, r.Source = "dev", "files", "read", "mcp"
		}
		if i%5 == 0 {
			r.Outcome, r.ErrorCode = trace.Error, "NOT_FOUND"
		}
		if i%7 == 0 {
			r.SessionID = ""
		}
		w.Record(r)
	}
	w.Flush()
}

func ids(rs []trace.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.RequestID
	}
	return out
}

func TestQueryPagesWithoutDuplicatesOrGaps(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seed(t, s, 120, time.Now())
		for _, limit := range []int{1, 7, 25, 40, 120, 500} {
			t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
				var got []string
				cursor, pages := "", 0
				for {
					recs, next, err := trace.Query(ctx, s, testKey, trace.Filter{Limit: limit, Cursor: cursor})
					if err != nil {
						t.Fatal(err)
					}
					pages++
					if len(recs) > limit || (next != "" && len(recs) != limit) {
						t.Fatalf("page %d has %d records (limit %d, next %q)", pages, len(recs), limit, next)
					}
					got = append(got, ids(recs)...)
					if next == "" {
						break
					}
					cursor = next
				}
				if want := (120 + limit - 1) / limit; pages != want {
					t.Errorf("%d pages, want %d", pages, want)
				}
				if len(got) != 120 {
					t.Fatalf("%d records, want 120", len(got))
				}
				for i, id := range got { // newest first, each exactly once
					if want := fmt.Sprintf("r%03d", 119-i); id != want {
						t.Fatalf("record %d is %s, want %s", i, id, want)
					}
				}
			})
		}
	})
}

func TestQueryIgnoresRecordsWrittenWhilePaging(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seed(t, s, 30, time.Now())
		recs, next, err := trace.Query(ctx, s, testKey, trace.Filter{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		seed(t, s, 5, time.Now()) // five newer records, r000..r004 again
		rest, next2, err := trace.Query(ctx, s, testKey, trace.Filter{Limit: 100, Cursor: next})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 10 || len(rest) != 20 || next2 != "" {
			t.Fatalf("pages of %d and %d records (next %q), want 10 and 20", len(recs), len(rest), next2)
		}
		if rest[0].RequestID != "r019" || rest[19].RequestID != "r000" {
			t.Fatalf("second page runs %s..%s, want r019..r000", rest[0].RequestID, rest[19].RequestID)
		}
		first, _, err := trace.Query(ctx, s, testKey, trace.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(first) != 35 || first[0].RequestID != "r004" {
			t.Fatalf("a new first page has %d records starting at %s, want 35 from r004", len(first), first[0].RequestID)
		}
	})
}

func TestQueryDefaultLimitAndFields(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		base := time.Date(2025, 3, 1, 12, 0, 0, 123456000, time.UTC)
		seed(t, s, 120, base)
		recs, next, err := trace.Query(context.Background(), s, testKey, trace.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != trace.DefaultLimit || next == "" {
			t.Fatalf("%d records, next %q; want %d and a cursor", len(recs), next, trace.DefaultLimit)
		}
		byID := map[string]trace.Record{}
		for _, r := range recs {
			byID[r.RequestID] = r
		}
		got := byID["r105"] // mcp (105 = 3*35), error (5*21), no session (7*15)
		want := trace.Record{RequestID: "r105", Surface: "test", Toolbox: "dev", Server: "files", Tool: "read", Source: "mcp",
			Workspace: "w1", StartedAt: base.Add(105 * time.Second), Duration: 105 * time.Microsecond,
			Outcome: trace.Error, ErrorCode: "NOT_FOUND", ArgsBytes: 105, ResultBytes: 210}
		if !got.StartedAt.Equal(want.StartedAt) {
			t.Fatalf("started_at %v, want %v", got.StartedAt, want.StartedAt)
		}
		got.StartedAt = want.StartedAt
		if got != want {
			t.Fatalf("record\n got %+v\nwant %+v", got, want)
		}
		if got.Name() != "dev__files__read" || byID["r101"].Name() != "belief_get" {
			t.Fatalf("flat names %q, %q", got.Name(), byID["r101"].Name())
		}
		if r := byID["r101"]; r.SessionID != "s1" || r.ErrorCode != "" || r.Outcome != trace.OK {
			t.Fatalf("record r101 = %+v", r)
		}
	})
}

func TestQueryFilters(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seed(t, s, 120, time.Now())
		// A call of an unknown tool is traced under the name it was called with.
		w := trace.NewWriter(s, slog.New(slog.DiscardHandler))
		w.Record(trace.Record{RequestID: "unknown", Surface: "test", Tool: "dev__files__nope", Workspace: "w0",
			StartedAt: time.Now(), Outcome: trace.Error, ErrorCode: "NOT_FOUND"})
		w.Close()

		count := func(pred func(i int) bool) int {
			n := 0
			for i := range 120 {
				if pred(i) {
					n++
				}
			}
			return n
		}
		tests := []struct {
			name   string
			filter trace.Filter
			want   int
		}{
			{"everything", trace.Filter{}, 121},
			{"local tool by flat name", trace.Filter{Tool: "belief_get"}, count(func(i int) bool { return i%3 != 0 })},
			{"downstream tool by flat name", trace.Filter{Tool: "dev__files__read"}, count(func(i int) bool { return i%3 == 0 })},
			{"downstream tool's own name is not its flat name", trace.Filter{Tool: "read"}, 0},
			{"unknown tool", trace.Filter{Tool: "dev__files__nope"}, 1},
			{"source local", trace.Filter{Source: "local"}, count(func(i int) bool { return i%3 != 0 })},
			{"source mcp", trace.Filter{Source: "mcp"}, count(func(i int) bool { return i%3 == 0 })},
			{"outcome error", trace.Filter{Outcome: "error"}, count(func(i int) bool { return i%5 == 0 }) + 1},
			{"outcome ok", trace.Filter{Outcome: "ok"}, count(func(i int) bool { return i%5 != 0 })},
			{"session", trace.Filter{Session: "s1"}, count(func(i int) bool { return i%2 == 1 && i%7 != 0 })},
			{"workspace", trace.Filter{Workspace: "w0"}, count(func(i int) bool { return i%2 == 0 }) + 1},
			{"no such workspace", trace.Filter{Workspace: "elsewhere"}, 0},
			{"combined", trace.Filter{Tool: "dev__files__read", Outcome: "error", Workspace: "w1"},
				count(func(i int) bool { return i%3 == 0 && i%5 == 0 && i%2 == 1 })},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				f := tt.filter
				f.Limit = 7
				seen := map[string]bool{}
				for {
					recs, next, err := trace.Query(ctx, s, testKey, f)
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range recs {
						if seen[r.RequestID] {
							t.Fatalf("%s returned twice", r.RequestID)
						}
						seen[r.RequestID] = true
						if (tt.filter.Source != "" && r.Source != tt.filter.Source) ||
							(tt.filter.Outcome != "" && r.Outcome != tt.filter.Outcome) ||
							(tt.filter.Session != "" && r.SessionID != tt.filter.Session) ||
							(tt.filter.Workspace != "" && r.Workspace != tt.filter.Workspace) ||
							(tt.filter.Tool != "" && r.Name() != tt.filter.Tool) {
							t.Fatalf("record %+v does not match %+v", r, tt.filter)
						}
					}
					if next == "" {
						break
					}
					f.Cursor = next
				}
				if len(seen) != tt.want {
					t.Fatalf("%d records, want %d", len(seen), tt.want)
				}
			})
		}
	})
}

func TestQueryRejectsBadFiltersAndCursors(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seed(t, s, 20, time.Now())
		filter := trace.Filter{Outcome: "ok", Limit: 5}
		_, cursor, err := trace.Query(ctx, s, testKey, filter)
		if err != nil || cursor == "" {
			t.Fatalf("first page: cursor %q, err %v", cursor, err)
		}
		raw, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			t.Fatal(err)
		}
		flip := func(i int) string {
			b := append([]byte(nil), raw...)
			b[i] ^= 1
			return base64.RawURLEncoding.EncodeToString(b)
		}
		tests := []struct {
			name   string
			key    []byte
			filter trace.Filter
			field  string
		}{
			{"unknown source", testKey, trace.Filter{Source: "remote"}, "source"},
			{"unknown outcome", testKey, trace.Filter{Outcome: "failed"}, "outcome"},
			{"negative limit", testKey, trace.Filter{Limit: -1}, "limit"},
			{"limit over the maximum", testKey, trace.Filter{Limit: trace.MaxLimit + 1}, "limit"},
			{"long tool", testKey, trace.Filter{Tool: strings.Repeat("a", 401)}, "tool"},
			{"long session", testKey, trace.Filter{Session: strings.Repeat("a", 201)}, "session"},
			{"long workspace", testKey, trace.Filter{Workspace: strings.Repeat("a", 201)}, "workspace"},
			{"invalid utf-8", testKey, trace.Filter{Session: "a\xff"}, "session"},
			{"garbage cursor", testKey, trace.Filter{Outcome: "ok", Cursor: "not a cursor!"}, "cursor"},
			{"short cursor", testKey, trace.Filter{Outcome: "ok", Cursor: cursor[:10]}, "cursor"},
			{"long cursor", testKey, trace.Filter{Outcome: "ok", Cursor: cursor + "AAAA"}, "cursor"},
			{"tampered version", testKey, trace.Filter{Outcome: "ok", Cursor: flip(0)}, "cursor"},
			{"tampered sequence", testKey, trace.Filter{Outcome: "ok", Cursor: flip(8)}, "cursor"},
			{"tampered mac", testKey, trace.Filter{Outcome: "ok", Cursor: flip(len(raw) - 1)}, "cursor"},
			{"other key", []byte("another key"), trace.Filter{Outcome: "ok", Cursor: cursor}, "cursor"},
			{"other filter", testKey, trace.Filter{Outcome: "error", Cursor: cursor}, "cursor"},
			{"filter dropped", testKey, trace.Filter{Cursor: cursor}, "cursor"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				recs, next, err := trace.Query(ctx, s, tt.key, tt.filter)
				if err == nil {
					t.Fatalf("accepted: %d records, next %q", len(recs), next)
				}
				e := errs.From(err)
				if e.Code != errs.BadRequest || e.Field != tt.field || !strings.HasPrefix(e.Message, tt.field+": ") {
					t.Fatalf("got %s field %q %q, want BAD_REQUEST naming %q", e.Code, e.Field, e.Message, tt.field)
				}
			})
		}
		// The same cursor with the same filter and another page size is fine.
		recs, _, err := trace.Query(ctx, s, testKey, trace.Filter{Outcome: "ok", Limit: 100, Cursor: cursor})
		if err != nil || len(recs) != 16-5 {
			t.Fatalf("next page: %d records, err %v; want 11", len(recs), err)
		}
		if _, _, err := trace.Query(ctx, s, nil, trace.Filter{}); err == nil {
			t.Fatal("a query without a key succeeded")
		}
	})
}
