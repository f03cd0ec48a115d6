package bounded

import (
	"context"
	"crypto/sha256"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/embed"
	"github.com/nexus-mcp/nexus/internal/toolsearch"
)

// Hybrid tool search (issue 27): with an embedding model configured (the
// one memory search uses, mcpkit.Options.Embedder), each tool's text is
// embedded once, when it is first searched after its listing changed, and
// a search fuses toolsearch's lexical ranking with the tools' cosine to the
// query by reciprocal rank fusion (embed.Fuse). The case it is for: a
// request in other words, or in another language, than the tool's
// description. Without a model, or when the model fails, the search is
// lexical, and says so.

// MinSimilarity is the cosine to the query below which a tool that the
// lexical ranking did not find is not a hit: a vector ranking always ranks
// everything, and a request that nothing fits gets no hits.
const MinSimilarity = 0.3

// embedTimeout bounds the embedding of the tools a search finds without
// vectors, and of its query.
const embedTimeout = 30 * time.Second

// toolVectors are the tools' vectors by their text's hash, for one model;
// they outlive an index build (a tool whose text did not change keeps its
// vector).
type toolVectors struct {
	mu    sync.Mutex
	model string
	byKey map[[32]byte][]float32
}

// embedText is what is embedded of a tool: its name's words, title,
// description and parameters, and where it is.
func embedText(t toolsearch.Tool) string {
	var b strings.Builder
	b.WriteString(strings.NewReplacer("_", " ", "-", " ").Replace(t.Tool))
	if t.Title != "" {
		b.WriteString(": " + t.Title)
	}
	if t.Description != "" {
		b.WriteString(". " + t.Description)
	}
	if len(t.Params) > 0 {
		b.WriteString(" Parameters:")
		for _, p := range t.Params {
			b.WriteString(" " + p.Name)
		}
		b.WriteString(".")
	}
	if t.ServerDescription != "" {
		b.WriteString(" Server: " + t.ServerDescription)
	}
	return b.String()
}

// vectors returns the vector of every entry of ci, embedding those not
// known yet; nil when the model failed (the search is then lexical).
func (s *Surface) vectors(ctx context.Context, ci *catalogIndex) [][]float32 {
	v := &s.vecs
	v.mu.Lock()
	if v.model != s.o.Embedder.Model() || v.byKey == nil {
		v.model, v.byKey = s.o.Embedder.Model(), map[[32]byte][]float32{}
	}
	out := make([][]float32, len(ci.entries))
	var missing []int
	for i, e := range ci.entries {
		if vec, ok := v.byKey[sha256.Sum256([]byte(e.text))]; ok {
			out[i] = vec
		} else {
			missing = append(missing, i)
		}
	}
	v.mu.Unlock()
	if len(missing) == 0 {
		return out
	}
	texts := make([]string, len(missing))
	for j, i := range missing {
		texts[j] = ci.entries[i].text
	}
	ctx, cancel := context.WithTimeout(ctx, embedTimeout)
	defer cancel()
	got, err := s.o.Embedder.Embed(ctx, texts)
	if err != nil || len(got) != len(texts) {
		s.logger().Warn("embed tools for search_tools: the search is lexical", "tools", len(texts), "err", err)
		return nil
	}
	v.mu.Lock()
	for j, i := range missing {
		vec := embed.Normalize(slices.Clone(got[j]))
		v.byKey[sha256.Sum256([]byte(ci.entries[i].text))] = vec
		out[i] = vec
	}
	v.mu.Unlock()
	return out
}

// rank ranks ci's tools for q: lexically, fused with the vector ranking
// when an embedding model is configured and answers. It returns the hits
// and the ranking used ("lexical" or "hybrid").
func (s *Surface) rank(ctx context.Context, ci *catalogIndex, q string, limit int, keep func(int) bool) ([]ranked, string) {
	if s.o.Embedder == nil {
		return lexical(ci, q, limit, keep), "lexical"
	}
	// Each side ranks deeper than the limit, so that fusion can lift a
	// tool that one side ranks lower.
	depth := max(limit*5, 50)
	lex := lexical(ci, q, depth, keep)
	vecs := s.vectors(ctx, ci)
	var qv [][]float32
	var err error
	if vecs != nil {
		qctx, cancel := context.WithTimeout(ctx, embedTimeout)
		qv, err = s.o.Embedder.Embed(qctx, []string{q})
		cancel()
		if err != nil || len(qv) != 1 {
			s.logger().Warn("embed a search_tools query: the search is lexical", "err", err)
			vecs = nil
		}
	}
	if vecs == nil {
		return trim(lex, limit), "lexical"
	}
	query := embed.Normalize(slices.Clone(qv[0]))
	type near struct {
		index int
		cos   float32
	}
	var close []near
	for i, vec := range vecs {
		if len(vec) != len(query) || !keep(i) {
			continue
		}
		if c := embed.Dot(query, vec); c >= MinSimilarity {
			close = append(close, near{i, c})
		}
	}
	slices.SortFunc(close, func(a, b near) int {
		switch {
		case a.cos > b.cos:
			return -1
		case a.cos < b.cos:
			return 1
		}
		return a.index - b.index
	})
	close = close[:min(len(close), depth)]
	lexNames := make([]string, len(lex))
	for i, h := range lex {
		lexNames[i] = ci.entries[h.index].tool.ID.Name()
	}
	vecNames := make([]string, len(close))
	for i, n := range close {
		vecNames[i] = ci.entries[n.index].tool.ID.Name()
	}
	fused := embed.Fuse(lexNames, vecNames)
	out := make([]ranked, 0, min(limit, len(fused)))
	for _, f := range fused[:min(limit, len(fused))] {
		// The score is the fused one, scaled to 0..1 (first in both).
		out = append(out, ranked{index: ci.byName[f.ID], score: f.Score / embed.MaxRRF})
	}
	return out, "hybrid"
}

// trim keeps the first limit hits.
func trim(h []ranked, limit int) []ranked { return h[:min(len(h), limit)] }
