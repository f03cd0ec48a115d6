package embed

import (
	"cmp"
	"slices"
)

// RRFK is the k of reciprocal rank fusion: a document ranked r (from 1) in
// a ranking adds 1/(RRFK + r) to its fused score. 60 is the value of Cormack,
// Clarke and Büttcher (SIGIR 2009), which damps the weight of the first few
// ranks without letting the tail count.
const RRFK = 60

// Fused is a document's place in a fused ranking: its id, its fused score
// and its 1-based rank in each input ranking (0: absent from it).
type Fused struct {
	ID          string
	Score       float64
	LexicalRank int
	VectorRank  int
}

// MaxRRF is the highest fused score of two rankings: first in both.
const MaxRRF = 2.0 / (RRFK + 1)

// Fuse merges a lexical ranking and a vector ranking (ids, best first) by
// reciprocal rank fusion with k = RRFK: best first, ties broken by the
// lexical rank, then the vector rank, then the id. An id twice in one
// ranking counts at its first place.
func Fuse(lexical, vector []string) []Fused {
	byID := make(map[string]*Fused, len(lexical)+len(vector))
	var order []*Fused
	add := func(ids []string, set func(f *Fused, rank int) bool) {
		for i, id := range ids {
			f := byID[id]
			if f == nil {
				f = &Fused{ID: id}
				byID[id] = f
				order = append(order, f)
			}
			if set(f, i+1) {
				f.Score += 1.0 / float64(RRFK+i+1)
			}
		}
	}
	add(lexical, func(f *Fused, r int) bool {
		if f.LexicalRank != 0 {
			return false
		}
		f.LexicalRank = r
		return true
	})
	add(vector, func(f *Fused, r int) bool {
		if f.VectorRank != 0 {
			return false
		}
		f.VectorRank = r
		return true
	})
	out := make([]Fused, len(order))
	for i, f := range order {
		out[i] = *f
	}
	rank := func(r int) int {
		if r == 0 {
			return int(^uint(0) >> 1)
		}
		return r
	}
	slices.SortFunc(out, func(a, b Fused) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(rank(a.LexicalRank), rank(b.LexicalRank)); c != 0 {
			return c
		}
		if c := cmp.Compare(rank(a.VectorRank), rank(b.VectorRank)); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}
