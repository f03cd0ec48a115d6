// Package noteindex is an in-memory search index of a vault's notes, for
// the vaultLibrarian agent: BM25F over each note's title (its file's base
// name, split into words), headings, tags, property values and body, with
// the project's one stemmer and stop list (textsearch); a bonus for a note
// whose body says the query's words together, as a phrase; a fuzzy match of
// the query on the title; and filters by tag, property and path.
//
// An Index is safe for concurrent use: searches share a read lock, and a
// note put or deleted takes the write lock only to swap its postings in or
// out (the note is tokenized and stemmed before). Postings are kept per
// term, with each field's term frequency, so that a search reads only the
// postings of its terms, never every note; the length normalisation and
// the IDF are computed at search time from running totals, so a note put
// or deleted changes no other note's postings.
package noteindex

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Doc is a note as the index receives it, parsed.
type Doc struct {
	// Path is the note's vault-relative path, "/" separated, e.g.
	// "courses/MATH 100.md".
	Path     string
	Headings []string
	// Tags are the note's tags without '#', e.g. "math", "course/bc".
	Tags []string
	// Properties are the note's frontmatter, flattened to strings (lists
	// joined with ", ").
	Properties map[string]string
	// Body is the note's text without its frontmatter.
	Body string
	// BodyLine is the line of the file where Body starts (1-based; 0 is
	// taken as 1): the line numbers of a hit count from the file's first
	// line.
	BodyLine int
	Modified time.Time
	Size     int64
}

// The fields of a note, as BM25F weighs them.
const (
	fTitle = iota
	fHeadings
	fTags
	fProps
	fBody
	nFields
)

// params are the ranking's parameters. They are fixed (New), but held by
// the Index rather than package variables so that a test can measure what
// one brings.
type params struct {
	// weight is how much an occurrence in each field counts: the title
	// names what a note is about in a few words, headings and tags
	// classify it, properties describe it, the body says it at length.
	weight [nFields]float64
	// b is each field's length normalisation: short, fixed-form fields
	// (tags) take little.
	b [nFields]float64
	// k1 is BM25's term-frequency saturation.
	k1 float64
	// phrase is the phrase bonus: a note whose body holds the query's
	// words together, in order, adds phrase times the sum of the query
	// terms' IDF to its BM25F score (see Search).
	phrase float64
}

func defaultParams() params {
	return params{
		weight: [nFields]float64{fTitle: 3, fHeadings: 2, fTags: 2, fProps: 1.5, fBody: 1},
		b:      [nFields]float64{fTitle: 0.5, fHeadings: 0.5, fTags: 0.3, fProps: 0.5, fBody: 0.75},
		k1:     1.2,
		phrase: 0.5,
	}
}

// Index is a search index of notes. The zero value is not usable: call
// New.
type Index struct {
	p     params
	stems stemCache

	mu     sync.RWMutex
	notes  []*note // by slot; nil for a free slot
	free   []int32 // free slots
	live   int
	byPath map[string]int32
	lens   [][nFields]uint32 // each slot's field lengths, in terms
	masks  []uint64          // each slot's title letters (fuzzy.go)
	total  [nFields]int64    // the field lengths summed over the notes
	dict   map[string]int32  // stemmed term -> its id
	terms  []term            // by id
	// freeTerms are ids of terms no note has any more.
	freeTerms []int32
	// tagDocs are the notes of each tag (lower case), under each of its
	// ancestors too ("course/bc" under "course").
	tagDocs map[string][]int32
	// propDocs are the notes that have each property key (lower case).
	propDocs map[string][]int32

	// sorted caches the sorted paths (Paths); sortMu guards it among
	// readers, who hold mu for reading.
	sortMu   sync.Mutex
	sorted   []string
	sortedOK bool

	scratch sync.Pool // of *scratch (search.go)
}

// term is the postings of one stemmed term.
type term struct {
	key      string
	postings []posting
}

// posting is a note's occurrences of a term, by field, in a word: the
// note's slot in the low 32 bits, then its body's count (8 bits, at most
// 255), then the title's, headings', tags' and properties' (6 bits each,
// at most 63). BM25 has long saturated by then.
type posting uint64

// tfShift is where field f's count is in a posting.
func tfShift(f int) uint {
	if f == fBody {
		return 32
	}
	return 40 + 6*uint(f)
}

// maxTF is the largest count of field f a posting holds.
func maxTF(f int) uint8 {
	if f == fBody {
		return 255
	}
	return 63
}

func newPosting(doc int32, tf [nFields]uint8) posting {
	p := uint64(uint32(doc))
	for f, v := range tf {
		p |= uint64(min(v, maxTF(f))) << tfShift(f)
	}
	return posting(p)
}

func (p posting) doc() int32 { return int32(uint32(p)) }

func (p posting) tf(f int) uint8 { return uint8(uint64(p)>>tfShift(f)) & maxTF(f) }

// bodyOnly reports whether the term is only in the note's body.
func (p posting) bodyOnly() bool { return uint64(p)>>40 == 0 }

// note is an indexed note. It is not changed once indexed (a note put
// again is a new note), so a search may read it after releasing the lock.
type note struct {
	doc   Doc
	title string
	terms []int32  // ids of its distinct terms
	seq   []uint32 // hash of each token of its body, in order (phrases, snippets)
	pairs pairFilter
	fz    fuzzyTarget
	tags  []string // lower case, without '#'
	props []prop
}

// prop is a property, key and value lower-cased.
type prop struct{ key, value string }

// New returns an empty index.
func New() *Index {
	return &Index{
		p:        defaultParams(),
		stems:    stemCache{m: map[string]stemEntry{}},
		byPath:   map[string]int32{},
		dict:     map[string]int32{},
		tagDocs:  map[string][]int32{},
		propDocs: map[string][]int32{},
	}
}

// Put adds d, or replaces the note of its path.
func (ix *Index) Put(d Doc) {
	d.Headings = slices.Clone(d.Headings)
	d.Tags = slices.Clone(d.Tags)
	d.Properties = maps.Clone(d.Properties)
	n, tfs, lens := ix.analyze(d) // outside the lock: searches go on meanwhile

	ix.mu.Lock()
	defer ix.mu.Unlock()
	if id, ok := ix.byPath[d.Path]; ok {
		ix.remove(id)
	}
	var id int32
	if k := len(ix.free); k > 0 {
		id = ix.free[k-1]
		ix.free = ix.free[:k-1]
	} else {
		id = int32(len(ix.notes))
		ix.notes = append(ix.notes, nil)
		ix.lens = append(ix.lens, [nFields]uint32{})
		ix.masks = append(ix.masks, 0)
	}
	n.terms = make([]int32, len(tfs))
	for i, t := range tfs {
		tid, ok := ix.dict[t.key]
		if !ok {
			if k := len(ix.freeTerms); k > 0 {
				tid = ix.freeTerms[k-1]
				ix.freeTerms = ix.freeTerms[:k-1]
			} else {
				tid = int32(len(ix.terms))
				ix.terms = append(ix.terms, term{})
			}
			ix.terms[tid].key = t.key
			ix.dict[t.key] = tid
		}
		ix.terms[tid].postings = append(ix.terms[tid].postings, newPosting(id, t.tf))
		n.terms[i] = tid
	}
	ix.notes[id] = n
	ix.lens[id] = lens
	ix.masks[id] = n.fz.mask
	for f := range nFields {
		ix.total[f] += int64(lens[f])
	}
	for _, t := range tagKeys(n.tags) {
		ix.tagDocs[t] = append(ix.tagDocs[t], id)
	}
	for _, k := range propKeys(n.props) {
		ix.propDocs[k] = append(ix.propDocs[k], id)
	}
	ix.byPath[d.Path] = id
	ix.live++
	ix.invalidateSorted()
}

// Delete removes the note of path, if indexed.
func (ix *Index) Delete(path string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if id, ok := ix.byPath[path]; ok {
		ix.remove(id)
		ix.invalidateSorted()
	}
}

// remove takes note id out of the index. ix.mu is held for writing.
func (ix *Index) remove(id int32) {
	n := ix.notes[id]
	for _, tid := range n.terms {
		t := &ix.terms[tid]
		t.postings = removePosting(t.postings, id)
		if len(t.postings) == 0 {
			delete(ix.dict, t.key)
			*t = term{}
			ix.freeTerms = append(ix.freeTerms, tid)
		}
	}
	for f := range nFields {
		ix.total[f] -= int64(ix.lens[id][f])
	}
	for _, t := range tagKeys(n.tags) {
		removeDoc(ix.tagDocs, t, id)
	}
	for _, k := range propKeys(n.props) {
		removeDoc(ix.propDocs, k, id)
	}
	delete(ix.byPath, n.doc.Path)
	ix.notes[id] = nil
	ix.lens[id] = [nFields]uint32{}
	ix.masks[id] = 0
	ix.free = append(ix.free, id)
	ix.live--
}

// removePosting removes doc's posting from ps (their order is free).
func removePosting(ps []posting, doc int32) []posting {
	for i := range ps {
		if ps[i].doc() == doc {
			last := len(ps) - 1
			ps[i] = ps[last]
			ps = ps[:last]
			break
		}
	}
	if cap(ps) > 64 && len(ps) < cap(ps)/4 {
		ps = append([]posting(nil), ps...) // a list that shrank keeps no dead capacity
	}
	return ps
}

// removeDoc removes doc from m[key], and the key once it has none.
func removeDoc(m map[string][]int32, key string, doc int32) {
	ds := m[key]
	if i := slices.Index(ds, doc); i >= 0 {
		ds[i] = ds[len(ds)-1]
		ds = ds[:len(ds)-1]
	}
	if len(ds) == 0 {
		delete(m, key)
		return
	}
	m[key] = ds
}

// tagKeys are the keys a note's tags are indexed under: each tag and its
// ancestors, once.
func tagKeys(tags []string) []string {
	var out []string
	for _, t := range tags {
		for {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
			i := strings.LastIndexByte(t, '/')
			if i < 0 {
				break
			}
			t = t[:i]
		}
	}
	return out
}

// propKeys are a note's property keys, once.
func propKeys(props []prop) []string {
	var out []string
	for _, p := range props {
		if !slices.Contains(out, p.key) {
			out = append(out, p.key)
		}
	}
	return out
}

// invalidateSorted drops the sorted paths. ix.mu is held for writing.
func (ix *Index) invalidateSorted() {
	ix.sortMu.Lock()
	ix.sortedOK = false
	ix.sorted = nil
	ix.sortMu.Unlock()
}

// Len is the number of notes indexed.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.live
}

// Get returns the note of path, if indexed.
func (ix *Index) Get(path string) (Doc, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	id, ok := ix.byPath[path]
	if !ok {
		return Doc{}, false
	}
	d := ix.notes[id].doc
	d.Headings = slices.Clone(d.Headings)
	d.Tags = slices.Clone(d.Tags)
	d.Properties = maps.Clone(d.Properties)
	return d, true
}

// Paths returns the paths of the notes indexed, sorted.
func (ix *Index) Paths() []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ix.sortMu.Lock()
	defer ix.sortMu.Unlock()
	if !ix.sortedOK {
		ix.sorted = slices.Sorted(maps.Keys(ix.byPath))
		ix.sortedOK = true
	}
	return slices.Clone(ix.sorted)
}
