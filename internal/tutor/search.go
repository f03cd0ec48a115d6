package tutor

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/textsearch"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// courseIndex is the in-memory search index of the catalog: every course,
// in reference order, and an inverted index of its code, title and
// description for BM25 ranking (textsearch's tokens, plural folding and
// constants K1 and B).
//
// Fields are weighted by repeating their terms: a term of the course code
// counts codeWeight times, of the title titleWeight times, of the
// description once; a document's length is its number of tokens over the
// three fields, unweighted.
//
// The index is built from the store on first use and rebuilt when the
// catalog changes. A query reads the catalog's version (the number of
// courses and the latest updated_at of tn_courses: an import that adds,
// changes or removes a course changes it) when the index was last checked
// catalogCheckEvery ago or more, so an import by another process (`nexus
// import` while `nexus serve` runs) is seen within a second;
// catalogChanged, which the importer calls after an import commits, drops
// the index at once.
type courseIndex struct {
	version  string
	checked  time.Time // when version was last compared with the store's
	courses  []*Course
	byRef    map[string]int
	postings map[string][]coursePosting
	docLen   []float32
	avgLen   float64
	// terms are each course's distinct keys of its title and description
	// (their index in keys) with their weighted frequencies, for
	// tn_course_similar's query: the code is left out, so that courses are
	// similar by what they teach, not by their numbers.
	terms [][]coursePosting
	keys  []string
}

// coursePosting is a document (or, in courseIndex.terms, a key's index in keys)
// and the weighted frequency of a term in it.
type coursePosting struct {
	doc int32
	tf  float32
}

// Weights of the course code and title against the description.
const (
	codeWeight  = 3
	titleWeight = 2
)

// catalogChanged drops the search index, so that the next query rebuilds
// it from the store. The importer calls it after an import into this
// process's store commits; an import by another process is noticed by the
// catalog version every query reads (see courseIndex).
func (s *Server) catalogChanged() {
	s.mu.Lock()
	s.courses = nil
	s.mu.Unlock()
}

// catVersion is the version of the catalog stored: its number of
// courses and latest change.
func (s *Server) catVersion(ctx context.Context) (string, error) {
	var n, latest int64
	err := s.st.DB().QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(updated_at), 0) FROM tn_courses`).Scan(&n, &latest)
	if err != nil {
		return "", fmt.Errorf("read catalog version: %w", err)
	}
	return fmt.Sprintf("%d/%d", n, latest), nil
}

// catalogCheckEvery is how often a query reads the catalog's version:
// an import by another process is seen within it (one in this process at
// once, through catalogChanged). Reading the version scans tn_courses
// (about 0.6 ms on SQLite over 4,800 courses), which every query would
// otherwise pay.
var catalogCheckEvery = time.Second

// catIndex returns the search index of the current catalog, building it
// when there is none or the catalog changed since it was built.
func (s *Server) catIndex(ctx context.Context) (*courseIndex, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ix := s.courses; ix != nil && time.Since(ix.checked) < catalogCheckEvery {
		return ix, nil
	}
	v, err := s.catVersion(ctx)
	if err != nil {
		return nil, err
	}
	if s.courses == nil || s.courses.version != v {
		all, err := s.allCourses(ctx)
		if err != nil {
			return nil, err
		}
		s.courses = buildCourseIndex(v, all)
	}
	s.courses.checked = time.Now()
	return s.courses, nil
}

// buildCourseIndex indexes courses (in reference order).
func buildCourseIndex(version string, courses []*Course) *courseIndex {
	ix := &courseIndex{version: version, courses: courses, byRef: make(map[string]int, len(courses)),
		postings: map[string][]coursePosting{}, docLen: make([]float32, len(courses)), terms: make([][]coursePosting, len(courses))}
	keyID := map[string]int32{}
	var keys []string
	var total float64
	for i, c := range courses {
		ix.byRef[c.Course] = i
		tf, text := map[string]float32{}, map[string]float32{}
		n := 0
		add := func(s string, w float32, m map[string]float32) {
			for _, tok := range textsearch.Tokens(s) {
				k := textsearch.Key(tok)
				tf[k] += w
				if m != nil {
					m[k] += w
				}
				n++
			}
		}
		add(c.Subject+" "+c.Number+" "+c.Subject+c.Number, codeWeight, nil)
		add(c.Title, titleWeight, text)
		add(c.Description, 1, text)
		ix.docLen[i] = float32(n)
		total += float64(n)
		for k, f := range tf {
			ix.postings[k] = append(ix.postings[k], coursePosting{int32(i), f})
		}
		for k, f := range text {
			id, ok := keyID[k]
			if !ok {
				id = int32(len(keys))
				keyID[k] = id
				keys = append(keys, k)
			}
			ix.terms[i] = append(ix.terms[i], coursePosting{id, f})
		}
	}
	if len(courses) > 0 {
		ix.avgLen = math.Max(1, total/float64(len(courses)))
	}
	ix.keys = keys
	return ix
}

// courseHit is a course of a search's answer and its score.
type courseHit struct {
	doc   int
	score float64
}

// idf is BM25's inverse document frequency of an index key.
func (ix *courseIndex) idf(k string) float64 {
	n, d := float64(len(ix.courses)), float64(len(ix.postings[k]))
	return math.Log(1 + (n-d+0.5)/(d+0.5))
}

// search ranks the courses that match keep by BM25 over the query terms
// (textsearch.Terms of the query), best first, ties in reference order.
// A query naming a course code ("CPSC 1150", "cpsc1150") puts the courses
// of that code first. Only courses with a positive score are returned.
func (ix *courseIndex) search(query string, keep func(*Course) bool) []courseHit {
	var keys []string
	for _, t := range textsearch.Terms(query) {
		if k := textsearch.Key(t); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	weights := make(map[string]float64, len(keys))
	for _, k := range keys {
		weights[k] = 1
	}
	hits := ix.rank(weights, keep, -1)
	// An exact course code comes first.
	if subject, number, err := catalog.SplitCode(query); err == nil && len(hits) > 0 {
		top := hits[0].score + 1
		exact := false
		for i := range hits {
			c := ix.courses[hits[i].doc]
			if c.Subject == subject && strings.EqualFold(c.Number, number) {
				hits[i].score += top
				exact = true
			}
		}
		if exact {
			sortCourseHits(hits, ix)
		}
	}
	return hits
}

// rank scores every course against weighted query keys (a key's weight
// multiplies its BM25 term score), keeping those keep accepts and that
// are not skip.
func (ix *courseIndex) rank(weights map[string]float64, keep func(*Course) bool, skip int) []courseHit {
	scores := make([]float64, len(ix.courses))
	for k, w := range weights {
		ps := ix.postings[k]
		if len(ps) == 0 {
			continue
		}
		idf := ix.idf(k) * w
		for _, p := range ps {
			norm := textsearch.K1 * (1 - textsearch.B + textsearch.B*float64(ix.docLen[p.doc])/ix.avgLen)
			f := float64(p.tf)
			scores[p.doc] += idf * f * (textsearch.K1 + 1) / (f + norm)
		}
	}
	var hits []courseHit
	for i, sc := range scores {
		if sc > 0 && i != skip && (keep == nil || keep(ix.courses[i])) {
			hits = append(hits, courseHit{i, sc})
		}
	}
	sortCourseHits(hits, ix)
	return hits
}

func sortCourseHits(hits []courseHit, ix *courseIndex) {
	slices.SortFunc(hits, func(a, b courseHit) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return a.doc - b.doc // reference order
	})
}

// SimilarTerms is how many of a course's most distinctive terms make the
// query of tn_course_similar.
const SimilarTerms = 32

// similar ranks the courses like the course at doc: the BM25 query is the
// course's SimilarTerms most distinctive index keys (weighted frequency
// times idf), each weighted by its frequency in the course.
func (ix *courseIndex) similar(doc int, keep func(*Course) bool) []courseHit {
	type kw struct {
		k      string
		tf, by float64
	}
	var ks []kw
	for _, p := range ix.terms[doc] {
		k := ix.keys[p.doc]
		if len(k) < 3 && !numericToken(k) {
			continue // "a", "of": too short to say anything
		}
		ks = append(ks, kw{k, float64(p.tf), float64(p.tf) * ix.idf(k)})
	}
	slices.SortFunc(ks, func(a, b kw) int {
		if a.by != b.by {
			if a.by > b.by {
				return -1
			}
			return 1
		}
		return strings.Compare(a.k, b.k)
	})
	weights := map[string]float64{}
	for _, k := range ks[:min(len(ks), SimilarTerms)] {
		weights[k.k] = k.tf
	}
	return ix.rank(weights, keep, doc)
}

func numericToken(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
