package embed

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nexus-mcp/nexus/internal/embed/embedtest"
)

// BenchmarkCosineTopK is the vector side's work per query once a
// workspace's vectors are in memory: exact cosine over every vector and
// the best 100 by a heap (go test ./internal/embed -bench CosineTopK).
func BenchmarkCosineTopK(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, dims := range []int{384, 768, 1536} {
			b.Run(fmt.Sprintf("n=%d/dims=%d", n, dims), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				m := newMatrix(dims)
				v := make([]float32, dims)
				for i := range n {
					for j := range v {
						v[j] = float32(r.NormFloat64())
					}
					m.put(fmt.Sprintf("id-%d", i), Normalize(v))
				}
				q := make([]float32, dims)
				for j := range q {
					q[j] = float32(r.NormFloat64())
				}
				Normalize(q)
				b.ReportMetric(float64(m.bytes())/(1<<20), "MiB")
				b.ResetTimer()
				for b.Loop() {
					if len(topK(m, q, 100, -1)) != 100 {
						b.Fatal("short")
					}
				}
			})
		}
	}
}

// BenchmarkQueryEmbedding is one query's embedding round trip to the fake
// provider over loopback HTTP through the OpenAI SDK (a real provider adds
// its network and model time: 50-300 ms for OpenAI, 5-30 ms for a local
// Ollama, by their own figures).
func BenchmarkQueryEmbedding(b *testing.B) {
	fake := embedtest.New(b)
	e, err := New(Settings{Provider: "openai", BaseURL: fake.OpenAIURL(), Model: "fake-embed"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		if _, err := e.Embed(ctx, []string{"what did Maria buy last spring"}); err != nil {
			b.Fatal(err)
		}
	}
}
