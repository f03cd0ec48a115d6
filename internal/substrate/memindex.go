package substrate

import (
	"cmp"
	"runtime"
	"slices"
	"sync"

	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// memIndex finds tension candidates among beliefs held in memory (the
// items of a call, the beliefs committed since a mark, oldest first) as the
// store search would: related to the belief, sharing one of its selective
// terms, the newest first.
type memIndex struct {
	beliefs  []*Belief
	keys     [][]string       // relation keys of each belief, sorted
	postings map[string][]int // term key -> indices, ascending
	// docs are the beliefs' contents tokenized once for BM25: a bulk load
	// scores each belief against many others, and tokenizing them again
	// at each scoring was a fifth of the import's CPU (issue 23).
	docs []textsearch.Doc
}

func newMemIndex(beliefs []*Belief, keys [][]string) *memIndex {
	ix := &memIndex{beliefs: beliefs, keys: keys, postings: map[string][]int{}}
	texts := make([]string, len(beliefs))
	for i, b := range beliefs {
		for k := range keySet(b.Content) {
			ix.postings[k] = append(ix.postings[k], i)
		}
		texts[i] = b.Content
	}
	ix.docs = textsearch.NewDocs(texts)
	return ix
}

// candidates returns the indices of the beliefs before index end that are
// related to d (whose relation keys are keys) and share one of its
// selective terms.
func (ix *memIndex) candidates(d *draft, keys []string, end int) []int {
	seen := make([]bool, min(end, len(ix.beliefs)))
	var pool []int
	for _, t := range selective(d) {
		for _, j := range ix.postings[textsearch.Key(t)] {
			if j >= end {
				break
			}
			if seen[j] || !related(d.scoped, keys, ix.keys[j]) {
				continue
			}
			seen[j] = true
			pool = append(pool, j)
		}
	}
	return pool
}

// judgeInBatch judges each draft against the drafts before it in the call,
// in memory, choosing at most tensionCandidates of them as the store search
// would.
func judgeInBatch(an *memo, drafts []*draft) {
	if len(drafts) < 2 {
		return
	}
	beliefs := make([]*Belief, len(drafts))
	keys := make([][]string, len(drafts))
	for i, d := range drafts {
		beliefs[i], keys[i] = d.b, d.keys
	}
	ix := newMemIndex(beliefs, keys)
	var wg sync.WaitGroup
	work := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range work {
				d := drafts[i]
				d.findings = append(d.findings, judge(an, an.of(d.b), ix.best(d, ix.candidates(d, d.keys, i)), d.compared, true)...)
			}
		})
	}
	for i := 1; i < len(drafts); i++ {
		work <- i
	}
	close(work)
	wg.Wait()
}

// best returns at most tensionCandidates beliefs of pool (indices) that
// match d's terms, best by BM25 first, chosen among the newest
// tensionSearchCap of pool as the store search chooses among the newest
// related matches (a bulk load's items are related to hundreds of the
// items before them: scoring them all was a seventh of the load's CPU).
func (ix *memIndex) best(d *draft, pool []int) []*Belief {
	if len(pool) == 0 {
		return nil
	}
	if len(pool) > tensionSearchCap {
		pool = slices.Clone(pool)
		slices.Sort(pool)
		pool = pool[len(pool)-tensionSearchCap:]
	}
	docs := make([]textsearch.Doc, len(pool))
	for i, j := range pool {
		docs[i] = ix.docs[j]
	}
	scores := d.query().BM25Docs(docs, d.df, max(d.n, len(pool)))
	idx := make([]int, 0, len(pool))
	for i, sc := range scores {
		if sc > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(scores[y], scores[x]) })
	out := make([]*Belief, 0, min(len(idx), tensionCandidates))
	for _, i := range idx[:min(len(idx), tensionCandidates)] {
		out = append(out, ix.beliefs[pool[i]])
	}
	return out
}
