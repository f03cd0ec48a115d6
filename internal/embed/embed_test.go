package embed_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/embed/embedtest"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

func newEmbedder(t *testing.T, provider string, fake *embedtest.Server, dims int) embed.Embedder {
	t.Helper()
	base := fake.OpenAIURL()
	if provider == "ollama" {
		base = fake.URL
	}
	e, err := embed.New(embed.Settings{Provider: provider, BaseURL: base, Model: "fake-embed", Dims: dims, Batch: 3,
		Backoff: time.Millisecond, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func cosine(a, b []float32) float32 {
	a, b = embed.Normalize(append([]float32(nil), a...)), embed.Normalize(append([]float32(nil), b...))
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestClientsSpeakBothWires(t *testing.T) {
	for _, provider := range []string{"openai", "ollama"} {
		t.Run(provider, func(t *testing.T) {
			fake := embedtest.New(t)
			e := newEmbedder(t, provider, fake, 0)
			texts := []string{"I bought an automobile", "my new car", "the cat sleeps", "a purchase", "feline", "stock prices fell", "x"}
			vs, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) != len(texts) || len(vs[0]) != embedtest.DefaultDims {
				t.Fatalf("got %d vectors of %d dims", len(vs), len(vs[0]))
			}
			if req, n := fake.Requests(); req != 3 || n != len(texts) {
				t.Errorf("batches of 3: %d requests for %d texts, want 3 for %d", req, n, len(texts))
			}
			if c := cosine(vs[0], vs[1]); c < 0.4 {
				t.Errorf("automobile vs car: cosine %.2f, want close", c)
			}
			if c := cosine(vs[1], vs[5]); c > 0.3 {
				t.Errorf("car vs stock prices: cosine %.2f, want far", c)
			}
			want := embedtest.Vector(texts[2], embedtest.DefaultDims)
			for i := range want {
				if vs[2][i] != want[i] {
					t.Fatalf("vector of %q differs from the fake's at %d", texts[2], i)
				}
			}
		})
	}
}

func TestRetriesAndErrors(t *testing.T) {
	for _, provider := range []string{"openai", "ollama"} {
		t.Run(provider, func(t *testing.T) {
			ctx := context.Background()
			fake := embedtest.New(t)
			e := newEmbedder(t, provider, fake, 0)
			fake.FailNext(http.StatusTooManyRequests, http.StatusServiceUnavailable)
			if _, err := e.Embed(ctx, []string{"a car"}); err != nil {
				t.Fatalf("429 then 503 then success: %v", err)
			}
			if req, _ := fake.Requests(); req != 3 {
				t.Errorf("%d requests, want 3 (two retries)", req)
			}
			fake.Down(http.StatusBadGateway)
			_, err := e.Embed(ctx, []string{"a car"})
			if embed.KindOf(err) != embed.Unavailable {
				t.Errorf("provider down: %v (kind %q), want unavailable", err, embed.KindOf(err))
			}
			fake.Down(http.StatusUnauthorized)
			before, _ := fake.Requests()
			_, err = e.Embed(ctx, []string{"a car"})
			if after, _ := fake.Requests(); embed.KindOf(err) != embed.Auth || after != before+1 {
				t.Errorf("401: %v (kind %q) after %d requests, want auth after one", err, embed.KindOf(err), after-before)
			}
			fake.Down(0)
			fake.SetDims(32)
			e = newEmbedder(t, provider, fake, embedtest.DefaultDims)
			_, err = e.Embed(ctx, []string{"a car"})
			if embed.KindOf(err) != embed.BadResponse {
				t.Errorf("wrong dims: %v (kind %q), want bad_response", err, embed.KindOf(err))
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	e, err := embed.New(embed.Settings{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1", Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}); embed.KindOf(err) != embed.Unavailable {
		t.Errorf("unreachable: %v, want unavailable", err)
	}
	if _, err := embed.New(embed.Settings{Provider: "cohere", Model: "m"}); err == nil {
		t.Error("unknown provider accepted")
	}
}

func TestEncodeDecode(t *testing.T) {
	v := []float32{1, -2.5, 0, 3.25e-8}
	got, err := embed.Decode(embed.Encode(v), 4)
	if err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if got[i] != v[i] {
			t.Fatalf("%v -> %v", v, got)
		}
	}
	if _, err := embed.Decode(embed.Encode(v), 3); err == nil {
		t.Error("wrong length decoded")
	}
}

func TestFuse(t *testing.T) {
	got := embed.Fuse([]string{"a", "b", "c"}, []string{"c", "d", "a"})
	order := make([]string, len(got))
	for i, f := range got {
		order[i] = f.ID
	}
	// a: 1/61+1/63, c: 1/63+1/61 (tie, a first by lexical rank), b: 1/62, d: 1/62 (b first).
	want := []string{"a", "c", "b", "d"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("fused %v, want %v", order, want)
		}
	}
	if got[0].LexicalRank != 1 || got[0].VectorRank != 3 || got[3].LexicalRank != 0 {
		t.Errorf("ranks: %+v", got)
	}
	if f := embed.Fuse([]string{"x"}, []string{"x"}); f[0].Score != embed.MaxRRF {
		t.Errorf("first in both: %v, want %v", f[0].Score, embed.MaxRRF)
	}
}

// put writes docs in the store (as the tables the index reads).
func addBeliefs(t *testing.T, st *store.Store, ws string, contents map[string]string) {
	t.Helper()
	for id, c := range contents {
		_, err := st.DB().ExecContext(context.Background(), st.Q(`INSERT INTO beliefs (id, workspace, content, confidence, confidence_overall,
			domain_path, domain_key, status, created_at, updated_at) VALUES (?, ?, ?, '{}', 0.5, '[]', '', 'active', 1, 1)`), id, ws, c)
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestIndex(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		fake := embedtest.New(t)
		addBeliefs(t, st, "w1", map[string]string{
			"b1": "Alice drives an automobile to work",
			"b2": "Bob likes the stock market",
			"b3": "The weather is cold in winter",
		})
		addBeliefs(t, st, "w2", map[string]string{"c1": "Carol owns a car"})
		ix := embed.NewIndex(st, newEmbedder(t, "openai", fake, 0), embed.Options{Sources: []embed.Source{embed.BeliefSource}})
		if err := ix.Backfill(ctx); err != nil {
			t.Fatal(err)
		}
		p := ix.Progress()
		if len(p) != 1 || p[0].Embedded != 4 || p[0].Pending != 0 {
			t.Errorf("progress %+v, want 4 embedded", p)
		}
		hits, err := ix.Search(ctx, embed.KindBelief, "w1", "car", 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != "b1" {
			t.Fatalf("car in w1: %+v, want b1 (automobile) first, c1 of w2 never", hits)
		}
		for _, h := range hits {
			if h.ID == "c1" {
				t.Errorf("another workspace's vector: %+v", hits)
			}
		}
		// A new row: not searchable until embedded; then the cache reads
		// only what is new.
		addBeliefs(t, st, "w1", map[string]string{"b4": "A sedan was parked"})
		if err := ix.Backfill(ctx); err != nil {
			t.Fatal(err)
		}
		hits, _ = ix.Search(ctx, embed.KindBelief, "w1", "vehicle", 5)
		if len(hits) < 2 {
			t.Fatalf("vehicle after a new belief: %+v, want b1 and b4", hits)
		}
		st4, err := ix.Status(ctx)
		if err != nil || st4[0].Rows != 5 || st4[0].Embedded != 5 || st4[0].Pending != 0 {
			t.Errorf("status %+v %v", st4, err)
		}
		// Another model: nothing of the old one is used, the backfill
		// embeds everything again.
		_, before := fake.Requests()
		e2, _ := embed.New(embed.Settings{Provider: "ollama", BaseURL: fake.URL, Model: "fake-embed-2"})
		ix2 := embed.NewIndex(st, e2, embed.Options{Sources: []embed.Source{embed.BeliefSource}})
		if hits, _ := ix2.Search(ctx, embed.KindBelief, "w1", "car", 5); len(hits) != 0 {
			t.Errorf("model 2 before its backfill found %+v", hits)
		}
		if err := ix2.Backfill(ctx); err != nil {
			t.Fatal(err)
		}
		if _, after := fake.Requests(); after-before != 5+1 { // 5 rows and the query
			t.Errorf("model change embedded %d texts, want 5 rows and one query", after-before)
		}
		if hits, _ := ix2.Search(ctx, embed.KindBelief, "w1", "car", 5); len(hits) == 0 || hits[0].ID != "b1" && hits[0].ID != "b4" {
			t.Errorf("model 2 after its backfill: %+v", hits)
		}
		st2, _ := ix2.Status(ctx)
		if st2[0].Embedded != 5 || st2[0].OtherModels != 0 {
			t.Errorf("after re-embedding: %+v, want the old model's vectors replaced", st2)
		}
	})
}

func TestIndexProviderDown(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		fake := embedtest.New(t)
		addBeliefs(t, st, "w", map[string]string{"b1": "an automobile"})
		e, _ := embed.New(embed.Settings{Provider: "openai", BaseURL: fake.OpenAIURL(), Model: "m", MaxRetries: -1})
		ix := embed.NewIndex(st, e, embed.Options{Sources: []embed.Source{embed.BeliefSource}, Cooldown: time.Hour})
		fake.Down(http.StatusServiceUnavailable)
		if err := ix.Backfill(ctx); embed.KindOf(err) != embed.Unavailable {
			t.Fatalf("backfill with the provider down: %v", err)
		}
		if p := ix.Progress(); len(p) != 1 || p[0].LastError == "" || p[0].Pending != 1 {
			t.Errorf("progress %+v, want the error and 1 pending", p)
		}
		fused := ix.Hybrid(ctx, embed.KindBelief, "w", "car", []string{"x", "y"}, 10)
		if len(fused) != 2 || fused[0].ID != "x" {
			t.Errorf("hybrid with the provider down: %+v, want the lexical ranking", fused)
		}
		req, _ := fake.Requests()
		ix.Hybrid(ctx, embed.KindBelief, "w", "car", nil, 10)
		if after, _ := fake.Requests(); after != req {
			t.Errorf("cooling down still asked the provider")
		}
		fake.Down(0)
		if err := ix.Backfill(ctx); err != nil {
			t.Fatal(err)
		}
		if s, _ := ix.Status(ctx); s[0].Embedded != 1 {
			t.Errorf("resumed: %+v", s)
		}
	})
}

func TestRunStopsAndEmbedsOnNotify(t *testing.T) {
	st := storetest.OpenTestSQLite(t)
	fake := embedtest.New(t)
	ix := embed.NewIndex(st, newEmbedder(t, "openai", fake, 0), embed.Options{Sources: []embed.Source{embed.BeliefSource}, Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ix.Run(ctx) }()
	addBeliefs(t, st, "w", map[string]string{"b1": "an automobile"})
	ix.Notify()
	for i := 0; ; i++ {
		s, err := ix.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s[0].Embedded == 1 {
			break
		}
		if i > 500 {
			t.Fatal("the job did not embed the new row after Notify")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
}
