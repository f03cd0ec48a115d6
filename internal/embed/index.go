package embed

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nexus-mcp/nexus/internal/store"
)

// Kinds of rows that have vectors.
const (
	KindBelief   = "belief"
	KindExchange = "exchange"
)

// Source is a table whose rows are embedded: its rows have columns id
// (unique, ordered as text) and workspace, and Text, an SQL expression over
// the row (alias t), is what is embedded.
type Source struct {
	Kind, Table, Text string
}

// The tables Nexus embeds: beliefs (substrate) and exchanges (vkb).
var (
	BeliefSource   = Source{Kind: KindBelief, Table: "beliefs", Text: "t.content"}
	ExchangeSource = Source{Kind: KindExchange, Table: "exchanges", Text: "t.content"}
)

// MaxTextRunes bounds the text embedded (the first MaxTextRunes runes):
// about 2,000 tokens, under every embedding model's input limit.
const MaxTextRunes = 8000

// Options tune an [Index]; zero values take the defaults.
type Options struct {
	Logger *slog.Logger
	// Sources are the tables the background job embeds (default
	// BeliefSource and ExchangeSource).
	Sources []Source
	// CacheBytes bounds the vectors held in memory, over all workspaces
	// (default 512 MiB); the least recently searched workspaces leave
	// first. A workspace bigger than the bound alone is still held.
	CacheBytes int
	// MinScore: a vector hit's cosine must be above it (default 0).
	MinScore float32
	// Interval is how often the background job looks for rows without a
	// vector (default 30 s); writes wake it at once ([Index.Notify]).
	// FullEvery is how often it sweeps every row again, not just those
	// after the last it embedded, and deletes the vectors of deleted rows
	// (default 10 min).
	Interval, FullEvery time.Duration
	// Batch is how many rows one step of the job embeds and writes
	// (default 128).
	Batch int
	// QueryTimeout bounds embedding a search's query (default 5 s);
	// Cooldown is how long searches skip the vector side after that failed
	// (default 30 s), so that a provider that is down costs a search
	// nothing.
	QueryTimeout, Cooldown time.Duration
}

// Index keeps and searches the vectors of one embedding model: written by
// the background job ([Index.Run]), ranked by exact cosine in Go, a
// workspace's vectors loaded into memory at its first search and then only
// what was written since.
type Index struct {
	st  *store.Store
	emb Embedder
	o   Options
	log *slog.Logger

	mu    sync.Mutex
	cache map[cacheKey]*entry
	bytes int
	clock uint64

	notify    chan struct{}
	downUntil atomic.Int64 // unix nanos; searches skip vectors until then

	progMu   sync.Mutex
	progress map[string]Progress
}

type cacheKey struct{ kind, workspace string }

// entry is one workspace's vectors of one kind; mu guards m, used and size.
type entry struct {
	mu   sync.RWMutex
	m    *matrix
	used uint64
	size int
}

// NewIndex returns the index of emb's vectors in st.
func NewIndex(st *store.Store, emb Embedder, o Options) *Index {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Sources == nil {
		o.Sources = []Source{BeliefSource, ExchangeSource}
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = 512 << 20
	}
	if o.Interval <= 0 {
		o.Interval = 30 * time.Second
	}
	if o.FullEvery <= 0 {
		o.FullEvery = 10 * time.Minute
	}
	if o.Batch <= 0 {
		o.Batch = 128
	}
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = 5 * time.Second
	}
	if o.Cooldown <= 0 {
		o.Cooldown = 30 * time.Second
	}
	return &Index{st: st, emb: emb, o: o, log: o.Logger, cache: map[cacheKey]*entry{},
		notify: make(chan struct{}, 1), progress: map[string]Progress{}}
}

// Model is the embedding model's name.
func (ix *Index) Model() string { return ix.emb.Model() }

// Embedder is the index's embedding model (tool search embeds with it too).
func (ix *Index) Embedder() Embedder { return ix.emb }

// Notify tells the background job that rows were written: it looks for
// rows without vectors at once instead of at its next interval. It never
// blocks.
func (ix *Index) Notify() {
	select {
	case ix.notify <- struct{}{}:
	default:
	}
}

// EmbedQuery embeds a search's text within Options.QueryTimeout. After a
// failure it fails at once for Options.Cooldown (errors.Is ErrCoolingDown).
func (ix *Index) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if until := ix.downUntil.Load(); until > 0 && time.Now().UnixNano() < until {
		return nil, ErrCoolingDown
	}
	ctx, cancel := context.WithTimeout(ctx, ix.o.QueryTimeout)
	defer cancel()
	vs, err := ix.emb.Embed(ctx, []string{truncate(text)})
	if err != nil {
		ix.downUntil.Store(time.Now().Add(ix.o.Cooldown).UnixNano())
		return nil, fmt.Errorf("embed query: %w", err)
	}
	return Normalize(vs[0]), nil
}

// ErrCoolingDown: a query embedding failed recently, the vector side is
// skipped for now.
var ErrCoolingDown = errors.New("embed query: skipped, the embedding provider failed recently")

// Search returns the k rows of kind in workspace closest to query by cosine
// (above Options.MinScore), best first.
func (ix *Index) Search(ctx context.Context, kind, workspace, query string, k int) ([]Hit, error) {
	q, err := ix.EmbedQuery(ctx, query)
	if err != nil {
		return nil, err
	}
	return ix.SearchVector(ctx, kind, workspace, q, k)
}

// SearchVector is Search with the query's vector (normalized, as
// EmbedQuery returns it).
func (ix *Index) SearchVector(ctx context.Context, kind, workspace string, q []float32, k int) ([]Hit, error) {
	e, err := ix.load(ctx, kind, workspace)
	if err != nil {
		return nil, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.m.dims == 0 {
		return nil, nil
	}
	if len(q) != e.m.dims {
		return nil, fmt.Errorf("vector search: query has %d dimensions, the stored vectors %d", len(q), e.m.dims)
	}
	return topK(e.m, q, k, ix.o.MinScore), nil
}

// Hybrid fuses a lexical ranking (ids, best first) with the k rows of kind
// in workspace closest to query ([Fuse], reciprocal rank fusion). When the
// vector side fails (the provider is down, the store fails) the error is
// logged and the lexical ranking comes back alone, fused with nothing: a
// search never fails for want of vectors. vkb's exchange_search calls it
// with KindExchange; belief_query does the same with its own filters.
func (ix *Index) Hybrid(ctx context.Context, kind, workspace, query string, lexical []string, k int) []Fused {
	hits, err := ix.Search(ctx, kind, workspace, query, k)
	if err != nil {
		ix.LogSearchError(kind, err)
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return Fuse(lexical, ids)
}

// LogSearchError logs a vector search's failure: at warning level, but
// only once per cooldown (at debug level while cooling down).
func (ix *Index) LogSearchError(kind string, err error) {
	if errors.Is(err, ErrCoolingDown) {
		ix.log.Debug("hybrid search: lexical only", "kind", kind, "err", err)
		return
	}
	ix.log.Warn("hybrid search: vector side failed, lexical results only", "kind", kind, "model", ix.emb.Model(), "err", err)
}

// load returns the workspace's cache entry, brought up to date with the
// vectors written since it was last read.
func (ix *Index) load(ctx context.Context, kind, workspace string) (*entry, error) {
	key := cacheKey{kind, workspace}
	ix.mu.Lock()
	e := ix.cache[key]
	if e == nil {
		e = &entry{m: newMatrix(ix.emb.Dims())}
		ix.cache[key] = e
	}
	ix.clock++
	e.used = ix.clock
	ix.mu.Unlock()

	e.mu.RLock()
	since := e.m.maxSeq
	e.mu.RUnlock()
	rows, err := ix.st.DB().QueryContext(ctx, ix.st.Q(`SELECT seq, id, dims, vector FROM embeddings
		WHERE kind = ? AND workspace = ? AND model = ? AND seq > ? ORDER BY seq`), kind, workspace, ix.emb.Model(), since)
	if err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	defer rows.Close()
	type row struct {
		seq int64
		id  string
		v   []float32
	}
	var fresh []row
	for rows.Next() {
		var r row
		var dims int
		var b []byte
		if err := rows.Scan(&r.seq, &r.id, &dims, &b); err != nil {
			return nil, fmt.Errorf("load vectors: %w", err)
		}
		if r.v, err = Decode(b, dims); err != nil {
			return nil, fmt.Errorf("load vectors: %s %s: %w", kind, r.id, err)
		}
		fresh = append(fresh, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	if len(fresh) == 0 {
		return e, nil
	}
	e.mu.Lock()
	skipped := 0
	for _, r := range fresh {
		if r.seq <= e.m.maxSeq {
			continue // another search applied it meanwhile
		}
		e.m.maxSeq = r.seq
		if e.m.dims == 0 {
			e.m.dims = len(r.v)
		}
		if len(r.v) != e.m.dims {
			skipped++
			continue
		}
		e.m.put(r.id, Normalize(r.v))
	}
	size := e.m.bytes()
	e.mu.Unlock()
	if skipped > 0 {
		ix.log.Warn("vectors of another length than the workspace's are ignored", "kind", kind, "workspace", workspace, "count", skipped)
	}
	ix.account(key, e, size)
	return e, nil
}

// account records e's new size and evicts the least recently used other
// workspaces while the cache is over its bound.
func (ix *Index) account(key cacheKey, e *entry, size int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.cache[key] != e {
		return
	}
	ix.bytes += size - e.size
	e.size = size
	for ix.bytes > ix.o.CacheBytes {
		var oldest cacheKey
		var victim *entry
		for k, c := range ix.cache {
			if c != e && (victim == nil || c.used < victim.used) {
				oldest, victim = k, c
			}
		}
		if victim == nil {
			return
		}
		ix.bytes -= victim.size
		delete(ix.cache, oldest)
	}
}

// forget drops the cached vectors of every workspace (after deletions,
// which reading only what is new would not see).
func (ix *Index) forget() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.cache = map[cacheKey]*entry{}
	ix.bytes = 0
}

// CachedBytes is the memory the cached vectors take, roughly.
func (ix *Index) CachedBytes() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.bytes
}

// Doc is a row to embed.
type Doc struct {
	Kind, ID, Workspace, Text string
}

// Put embeds docs and stores their vectors (replacing any they had).
func (ix *Index) Put(ctx context.Context, docs []Doc) error {
	if len(docs) == 0 {
		return nil
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = truncate(d.Text)
	}
	vs, err := ix.emb.Embed(ctx, texts)
	if err != nil {
		return err
	}
	now := store.Micros(time.Now())
	return ix.st.Tx(ctx, func(tx *sql.Tx) error {
		for i, d := range docs {
			if _, err := tx.ExecContext(ctx, ix.st.Q(`DELETE FROM embeddings WHERE kind = ? AND id = ?`), d.Kind, d.ID); err != nil {
				return fmt.Errorf("store vector: %w", err)
			}
			h := sha256.Sum256([]byte(d.Text))
			if _, err := tx.ExecContext(ctx, ix.st.Q(`INSERT INTO embeddings (kind, id, workspace, model, dims, vector, content_hash, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`), d.Kind, d.ID, d.Workspace, ix.emb.Model(), len(vs[i]), Encode(vs[i]), h[:], now); err != nil {
				return fmt.Errorf("store vector: %w", err)
			}
		}
		return nil
	})
}

// truncate keeps the first MaxTextRunes runes of s.
func truncate(s string) string {
	if len(s) <= MaxTextRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == MaxTextRunes {
			return s[:i]
		}
		n++
	}
	return s
}
