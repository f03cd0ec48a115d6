package tutor

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kljensen/snowball/english"
	"github.com/nexus-mcp/nexus/internal/textsearch"
	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
	"github.com/nexus-mcp/nexus/internal/tutor/transfer"
)

// courseIndex is the in-memory search index of the catalog: every course,
// in reference order, and an inverted index of its code, subject name,
// title and description for BM25F ranking, built for the words a student
// types ("intro programming", "calc 1", "first year psych").
//
// Words are stemmed (Snowball English, Porter2: "programming" and
// "program" are one word, "introductory" and "introduces" are not
// "introduction" but see below) in the index and the query alike. Each
// course has four fields: its code ("CPSC", "1150", "CPSC1150"), the name
// of its subject (subjectNames: CPSC is "Computer Science", so a course
// with nothing but its code to say so is found for it), its title and its
// description (without Langara's requisite paragraphs), and a fifth,
// weighed as a title, for the titles of its transfer equivalents
// (equivalentTitles: what a course is called where it transfers, and what
// transfers to it; Langara's "Program Design" is SFU's "Introduction to
// Computing Science and Programming I"). Titles and
// descriptions also count two adjacent words as one where they make one of
// searchCompounds ("Data Base" is "database"). A stem's frequency in a
// course is BM25F's: the sum over the fields of weight × count ÷ the
// field's length normalization (rankParams: code and title weigh more than
// the description; code and subject name are not length-normalized). The
// course's score is then BM25 (textsearch.K1) over the query's concepts.
//
// A query is read into concepts (courseQuery): each word not a stop word
// is a concept of its stem and, where searchAbbrevs expands it, the stems
// of what it stands for ("intro": introduction, introductory, introduce;
// "calc": calculus; "cs": computer science; "1": "i", as in "Calculus I"),
// expansions weighing rankParams.expansion. A concept's frequency in a
// course is the weighted sum of its stems' and its IDF is that of the
// courses holding any of them, so a rare spelling ("intro") weighs no more
// than the common one it means. The words of an expansion after its first
// ("science" of "computer science") are concepts of their own. Two-word
// abbreviations (searchPhrases: "comp sci", "lin alg") are read first, and
// words that ask for a year level (searchLevels: "first year") are not
// searched but raise that level's courses by rankParams.levelBoost.
// searchRelated adds, at rankParams.related, words calendars use for what
// a query word means ("intro": principles, general, elementary;
// "calculus": derivative, integral).
//
// The BM25 score is then multiplied by priors, each a rankParams
// constant: students mostly look for undergraduate, lower-level, first
// courses, so a graduate course (an outline's degreeLevel GRAD) counts
// graduate of its score, a course of year 2 to 4 loses levelStep per year
// above the first (unless the query asks for a level), and a course whose
// title numbers it past the first of a sequence (II, III, IV, IIb,
// "Intermediate", "Advanced") counts sequel of it unless the query names
// such a number. A course gains cover times the share of its title's words
// the query asks for, and affinity times how much the query's words
// belong to its subject (the share of the titles holding them that are of
// its subject code). A query that is a course code ("CPSC 1150",
// "cmpt120") puts the courses of that code first.
//
// The constants were tuned on testdata/search_golden.json, 30 queries
// students type with the courses a person expects in the top 5
// (TestSearchGolden; docs/benchmarks.md, "Course search golden set
// (issue 22)").
//
// The index is built from the store on first use and rebuilt when the
// catalog changes. A query reads the catalog's version (the number of
// courses and the latest updated_at of tn_courses: an import that adds,
// changes or removes a course changes it) when the index was last checked
// catalogCheckEvery ago or more, so an import by another process (`nexus
// import` while `nexus serve` runs) is seen within a second;
// catalogChanged, which the importer calls after an import commits, drops
// the index at once. The version includes the transfer rules' (their
// equivalents' titles are indexed), and rulesChanged drops the index too.
type courseIndex struct {
	version  string
	checked  time.Time // when version was last compared with the store's
	courses  []*Course
	byRef    map[string]int
	postings map[string][]coursePosting
	// prior multiplies a course's score: rankParams.graduate for a
	// graduate course, 1 otherwise. level is the course's year level.
	prior  []float32
	level  []uint8
	sequel []bool // the title numbers the course past the first of a sequence
	// title are each course's title stems that count for rankParams.cover;
	// subject its subject's index in bySubject; titleSubjects the number
	// of titles of each subject holding each stem.
	title         [][]string
	subject       []int32
	titleSubjects map[string][]subjectCount
	// terms are each course's distinct stems of its title and description
	// (their index in keys) with their BM25F frequencies, for
	// tn_course_similar's query: the code is left out, so that courses are
	// similar by what they teach, not by their numbers.
	terms  [][]coursePosting
	keys   []string
	params rankParams // the constants the index was built and ranks with
}

// subjectCount is a number of titles of a subject (the index of the
// subject's first course).
type subjectCount struct {
	subject int32
	n       int32
}

// coursePosting is a document (or, in courseIndex.terms, a key's index in keys)
// and the BM25F frequency of a stem in it.
type coursePosting struct {
	doc int32
	tf  float32
}

// rankParams are the constants of the ranking. They were tuned on 20 of
// the 30 queries of testdata/search_golden.json and checked on the other
// 10 (TestSearchGolden; docs/benchmarks.md, "Course search golden set
// (issue 22)").
type rankParams struct {
	// k1 is BM25's saturation of a concept's frequency.
	k1 float64
	// Field weights: a stem in the code counts code times, in the
	// subject's name subject times, in the title title times, in the
	// description description times, before saturation.
	code, subject, title, description float64
	// BM25F length normalization (b) of the title and description; the
	// code and subject name have none.
	titleB, descriptionB float64
	// expansion is the weight of an abbreviation's expansion against the
	// word typed (1).
	expansion float64
	// levelBoost raises the score of the courses of the year level a
	// query asks for by this share.
	levelBoost float64
	// graduate multiplies the score of a graduate course.
	graduate float64
	// related is the weight of searchRelated's words.
	related float64
	// sequel multiplies the score of a course whose title numbers it past
	// the first of a sequence ("Calculus II") unless the query names such
	// a number.
	sequel float64
	// cover raises a course's score by this share times the share of its
	// title's words (stop words and sequence numbers aside) the query
	// asks for: "Web Development II" answers "web development" more
	// wholly than "Full Stack Web Development I".
	cover float64
	// affinity raises a course's score by this share times how much the
	// query's words belong to its subject: for each concept, the share of
	// the titles holding it that are of the course's subject, averaged
	// over the concepts ("programming" is mostly CPSC and CMPT titles).
	// A subject is its code, at any institution: CHEM is chemistry at
	// Langara and SFU alike, and one institution's many organic chemistry
	// titles do not rank its courses above the other's.
	affinity float64
	// equivalent is the weight of the titles of a course's transfer
	// equivalents (equivalentTitles), a field of its own, length-normalized
	// as titles are; not in tn_course_similar's terms.
	equivalent float64
	// levelStep lowers the score of undergraduate courses by this share
	// for each year level above the first, unless the query asks for a
	// level.
	levelStep float64
}

// defaultRank are the constants the tools rank with.
var defaultRank = rankParams{
	k1:   textsearch.K1,
	code: 3, subject: 1, title: 3, description: 1,
	titleB: 0.25, descriptionB: 0.75,
	expansion: 0.8, related: 0.5,
	levelBoost: 0.5, levelStep: 0.1, graduate: 0.5, sequel: 0.9,
	cover: 0.3, affinity: 0.5, equivalent: 3,
}

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
// when there is none or the catalog or the transfer rules changed since
// it was built.
func (s *Server) catIndex(ctx context.Context) (*courseIndex, error) {
	s.mu.Lock()
	if ix := s.courses; ix != nil && time.Since(ix.checked) < catalogCheckEvery {
		s.mu.Unlock()
		return ix, nil
	}
	s.mu.Unlock()
	// The transfer rules give each course its equivalents' titles; the
	// rule index takes s.mu itself, so it is read before the lock.
	rs, err := s.ruleIndex(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.catVersion(ctx)
	if err != nil {
		return nil, err
	}
	v += "+" + rs.version
	if s.courses == nil || s.courses.version != v {
		all, err := s.allCourses(ctx)
		if err != nil {
			return nil, err
		}
		s.courses = buildCourseIndex(v, all, defaultRank, equivalentTitles(rs.ix, all, s.now()))
	}
	s.courses.checked = time.Now()
	return s.courses, nil
}

// equivalentTitles maps each course of the catalogue to the titles of the
// courses it is equivalent to under a transfer rule in force at t: the
// destination courses of a one-course rule granting credit, and, the
// other way, that rule's source course. Only courses the catalogue holds
// (so with a title) count. A calendar often says what a course is only in
// its equivalent's title: Langara's CPSC 1150 "Program Design" transfers
// to SFU's CMPT 120 "Introduction to Computing Science and Programming I".
func equivalentTitles(ix *transfer.Index, courses []*Course, t time.Time) map[string][]string {
	title := make(map[string]string, len(courses))
	for _, c := range courses {
		title[c.Course] = c.Title
	}
	out := map[string][]string{}
	add := func(from, to string) {
		if tt, ok := title[to]; ok && tt != "" && !slices.Contains(out[from], tt) {
			out[from] = append(out[from], tt)
		}
	}
	for r := range ix.Rules() {
		if r.Outcome != transfer.OutcomeCredit || !r.InForce(t) || len(r.Source) != 1 || len(r.Source[0].Courses) != 1 {
			continue
		}
		src := r.Source[0].Courses[0].Course.String()
		if _, ok := title[src]; !ok {
			continue
		}
		for _, set := range r.Targets {
			for _, tg := range set.Targets {
				if tg.Kind != transfer.TargetCourse {
					continue
				}
				dst := tg.Course.String()
				add(src, dst)
				add(dst, src)
			}
		}
	}
	return out
}

// buildCourseIndex indexes courses (in reference order) with the ranking
// constants p; equivalents are the titles of each course's transfer
// equivalents (equivalentTitles; nil for none).
func buildCourseIndex(version string, courses []*Course, p rankParams, equivalents map[string][]string) *courseIndex {
	n := len(courses)
	ix := &courseIndex{version: version, courses: courses, byRef: make(map[string]int, n), params: p,
		postings: map[string][]coursePosting{}, prior: make([]float32, n), level: make([]uint8, n), sequel: make([]bool, n),
		title: make([][]string, n), subject: make([]int32, n), titleSubjects: map[string][]subjectCount{}, terms: make([][]coursePosting, n)}
	stems := map[string]string{} // a cache: the build stems each distinct word once
	an := func(s string, compounds bool) []string { return analyze(s, compounds, stems) }
	// Each course's fields as stems, and the fields' average lengths.
	type fields struct{ code, subject, title, desc, equiv []string }
	fs := make([]fields, n)
	var titleLen, descLen float64
	subjects := map[string]int32{}
	for i, c := range courses {
		ix.byRef[c.Course] = i
		desc, _, _ := courseTexts(c)
		fs[i] = fields{
			code:    an(c.Subject+" "+c.Number+" "+c.Subject+c.Number, false),
			subject: an(subjectNames[c.Subject], false),
			title:   an(c.Title, true),
			desc:    an(desc, true),
			equiv:   an(strings.Join(equivalents[c.Course], " . "), true),
		}
		titleLen += float64(len(fs[i].title))
		descLen += float64(len(fs[i].desc))
		ix.prior[i] = 1
		if c.Details.DegreeLevel == "GRAD" {
			ix.prior[i] = float32(p.graduate)
		}
		ix.level[i] = uint8(catalog.Level(c.Number))
		sub, ok := subjects[c.Subject]
		if !ok {
			sub = int32(i)
			subjects[c.Subject] = sub
		}
		ix.subject[i] = sub
		seen := map[string]bool{}
		for _, t := range textsearch.Tokens(c.Title) {
			if sequelWords[t] || sequelWords[strings.TrimRight(t, "ab")] { // "IIb"
				ix.sequel[i] = true
				continue
			}
			if textsearch.IsStopWord(t) || numericToken(t) || len(t) == 1 {
				continue
			}
			st := stemCached(t, stems)
			ix.title[i] = append(ix.title[i], st)
			if !seen[st] {
				seen[st] = true
				counts := ix.titleSubjects[st]
				if k := len(counts) - 1; k >= 0 && counts[k].subject == sub {
					counts[k].n++
				} else if j := slices.IndexFunc(counts, func(c subjectCount) bool { return c.subject == sub }); j >= 0 {
					counts[j].n++
				} else {
					counts = append(counts, subjectCount{sub, 1})
				}
				ix.titleSubjects[st] = counts
			}
		}
	}
	titleAvg, descAvg := math.Max(1, titleLen/float64(max(n, 1))), math.Max(1, descLen/float64(max(n, 1)))
	keyID := map[string]int32{}
	for i := range courses {
		f := fs[i]
		tf, text := map[string]float64{}, map[string]float64{}
		add := func(stems []string, w float64, m map[string]float64) {
			for _, s := range stems {
				tf[s] += w
				if m != nil {
					m[s] += w
				}
			}
		}
		add(f.code, p.code, nil)
		add(f.subject, p.subject, nil)
		add(f.title, p.title/(1-p.titleB+p.titleB*float64(len(f.title))/titleAvg), text)
		add(f.desc, p.description/(1-p.descriptionB+p.descriptionB*float64(len(f.desc))/descAvg), text)
		add(f.equiv, p.equivalent/(1-p.titleB+p.titleB*float64(len(f.equiv))/titleAvg), nil)
		for k, w := range tf {
			ix.postings[k] = append(ix.postings[k], coursePosting{int32(i), float32(w)})
		}
		for k, w := range text {
			id, ok := keyID[k]
			if !ok {
				id = int32(len(ix.keys))
				keyID[k] = id
				ix.keys = append(ix.keys, k)
			}
			ix.terms[i] = append(ix.terms[i], coursePosting{id, float32(w)})
		}
	}
	return ix
}

// analyze is the stems of text's words (textsearch.Tokens), stop words
// included (BM25 weighs them down); with compounds, two adjacent words
// that make one of searchCompounds add that word's stem. cache maps
// words to their stems (nil: none).
func analyze(text string, compounds bool, cache map[string]string) []string {
	toks := textsearch.Tokens(text)
	out := make([]string, 0, len(toks))
	for i, t := range toks {
		out = append(out, stemCached(t, cache))
		if compounds && i > 0 && searchCompounds[toks[i-1]+t] {
			out = append(out, stemCached(toks[i-1]+t, cache))
		}
	}
	return out
}

func stemCached(w string, cache map[string]string) string {
	if s, ok := cache[w]; ok {
		return s
	}
	s := stem(w)
	if cache != nil {
		cache[w] = s
	}
	return s
}

// stem is a word's Snowball English (Porter2) stem; words with digits
// ("120", "102w") are kept whole.
func stem(w string) string {
	if strings.ContainsFunc(w, func(r rune) bool { return r >= '0' && r <= '9' }) {
		return w
	}
	return english.Stem(w, false)
}

// courseHit is a course of a search's answer and its score.
type courseHit struct {
	doc   int
	score float64
}

// idf is BM25's inverse document frequency of a term held by d of the
// index's courses.
func (ix *courseIndex) idf(d int) float64 {
	n, df := float64(len(ix.courses)), float64(d)
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// search ranks the courses that match keep for query, best first, ties in
// reference order (see courseIndex for how). Only courses with a positive
// score are returned.
func (ix *courseIndex) search(query string, keep func(*Course) bool) []courseHit {
	p := ix.params
	q := parseCourseQuery(query, p)
	scores := make([]float64, len(ix.courses))
	tf := make([]float64, len(ix.courses)) // a concept's frequency in each course
	var touched []int32
	for _, c := range q.concepts {
		touched = touched[:0]
		for _, v := range c.variants {
			for _, ps := range ix.postings[v.stem] {
				if tf[ps.doc] == 0 {
					touched = append(touched, ps.doc)
				}
				tf[ps.doc] += v.weight * float64(ps.tf)
			}
		}
		idf := ix.idf(len(touched)) * c.weight
		for _, d := range touched {
			f := tf[d]
			scores[d] += idf * f * (p.k1 + 1) / (f + p.k1)
			tf[d] = 0
		}
	}
	asked := map[string]bool{} // every stem the query asks for
	for _, c := range q.concepts {
		for _, v := range c.variants {
			asked[v.stem] = true
		}
	}
	affinity := ix.affinities(q)
	var hits []courseHit
	for i, sc := range scores {
		if sc <= 0 || (keep != nil && !keep(ix.courses[i])) {
			continue
		}
		sc *= float64(ix.prior[i])
		if t := ix.title[i]; len(t) > 0 {
			n := 0
			for _, st := range t {
				if asked[st] {
					n++
				}
			}
			sc *= 1 + p.cover*float64(n)/float64(len(t))
		}
		if len(q.concepts) > 0 {
			sc *= 1 + p.affinity*affinity[ix.subject[i]]/float64(len(q.concepts))
		}
		switch l := int(ix.level[i]); {
		case q.level != 0:
			if l == q.level {
				sc *= 1 + p.levelBoost
			}
		case l >= 2 && l <= 4:
			sc *= 1 - p.levelStep*float64(l-1)
		}
		if ix.sequel[i] && !q.sequel {
			sc *= p.sequel
		}
		hits = append(hits, courseHit{i, sc})
	}
	sortCourseHits(hits, ix)
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

// affinities sums, for each subject (by the index of its first course),
// the share of the titles holding each of q's concepts that are of that
// subject (see rankParams.affinity).
func (ix *courseIndex) affinities(q courseQuery) map[int32]float64 {
	out := map[int32]float64{}
	for _, c := range q.concepts {
		by := map[int32]float64{}
		total := 0.0
		for _, v := range c.variants {
			for _, sc := range ix.titleSubjects[v.stem] {
				by[sc.subject] += v.weight * float64(sc.n)
				total += v.weight * float64(sc.n)
			}
		}
		for s, n := range by {
			out[s] += n / total
		}
	}
	return out
}

// rank scores every course against weighted stems (a stem's weight
// multiplies its BM25 term score), keeping those keep accepts and that
// are not skip.
func (ix *courseIndex) rank(weights map[string]float64, keep func(*Course) bool, skip int) []courseHit {
	scores := make([]float64, len(ix.courses))
	for k, w := range weights {
		ps := ix.postings[k]
		if len(ps) == 0 {
			continue
		}
		idf := ix.idf(len(ps)) * w
		for _, p := range ps {
			f := float64(p.tf)
			scores[p.doc] += idf * f * (textsearch.K1 + 1) / (f + textsearch.K1)
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
// course's SimilarTerms most distinctive stems of its title and
// description (BM25F frequency times idf), each weighted by its frequency
// in the course.
func (ix *courseIndex) similar(doc int, keep func(*Course) bool) []courseHit {
	type kw struct {
		k      string
		tf, by float64
	}
	var ks []kw
	for _, p := range ix.terms[doc] {
		k := ix.keys[p.doc]
		if len(k) < 3 && !numericToken(k) || textsearch.IsStopWord(k) {
			continue // "a", "of", "the": nothing to say
		}
		ks = append(ks, kw{k, float64(p.tf), float64(p.tf) * ix.idf(len(ix.postings[k]))})
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
