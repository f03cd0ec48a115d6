package substrate

import (
	"math"
	"strings"

	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/textsearch"
)

// On PostgreSQL a tension search asks for the newest matches of a belief's
// terms in its scope: the same domain or a shared entity. Walking the
// beliefs newest first and testing each (candidatesSQL's plan for terms
// with many matches) reads every newer belief out of scope: at 100,000
// beliefs, 22,000 rows and 11 ms for a course whose domain holds 300
// beliefs and whose entity 15, and a third of the database's time under
// belief_create. Each belief therefore carries its scope as keys (the
// column scope, migration 027, under a GIN index): the search intersects
// the full-text index's matches with the scope's in the indexes, and reads
// only the rows in both.

// scopeKeys are the scope keys of a belief of workspace in domain key dk
// (when set) linking entityIDs.
func scopeKeys(workspace, dk string, entityIDs []string) []string {
	var keys []string
	if dk != "" {
		keys = append(keys, "d\x1f"+workspace+"\x1f"+dk)
	}
	for _, id := range entityIDs {
		keys = append(keys, "e\x1f"+id)
	}
	return keys
}

// fromScope reports whether candidates reads f's candidates through the
// scope index (PostgreSQL, a tension search with a domain or entities).
func (s *Server) fromScope(f searchFilter) bool {
	return s.st.Dialect() == store.Postgres && f.window > 0 && (f.domainExact != "" || len(f.entityIDs) > 0) &&
		f.domainPrefix == "" && !f.includeSuperseded && f.validAt == nil && f.validAfter == nil && f.validBefore == nil
}

// scopeFilterMatches is the most full-text matches (in the whole store, by
// the terms' document frequencies) for which a tension search on
// PostgreSQL tests each match's scope in its row rather than through the
// scope index. Intersecting with the scope index means building the
// scope's bitmap, and a scope holding an institution is thousands of
// beliefs: at 100,000 beliefs (the creates benchmark's tension searches,
// 150 sampled) the median scope held 2,381 beliefs and its bitmap took
// about 0.45 ms, the time of fetching some 300 rows; the median search
// matched 84 beliefs, and 85 % matched at most 300.
const scopeFilterMatches = 250

// scopedCandidatesSQL is candidatesSQL's query for fromScope (and its
// arguments, and whether PostgreSQL must plan it for them): the same
// beliefs, newest first. "seq + 0" keeps the planner off the primary key's
// backward walk.
//
// Few matches (scopeFilterMatches): only the full-text index may drive the
// query, the scope, workspace and status written so that no index serves
// them ("IS TRUE" on the overlap, the columns concatenated with an empty
// string), so that the plan is the same for every
// value and PostgreSQL can keep one generic plan instead of planning each
// search (a quarter of a millisecond, as long as the search itself when it
// matches few). Many: both indexes, intersected, planned with the values.
func (s *Server) scopedCandidatesSQL(terms []string, f searchFilter) (string, []any, bool) {
	keys := scopeKeys(f.workspace, f.domainExact, f.entityIDs)
	few := f.known != nil && sumKnown(f.known, terms) <= scopeFilterMatches
	where := []string{"b.tsv @@ to_tsquery('english', ?)", "b.scope && ?::text[]", "b.workspace = ?", "b.status = ?"}
	if few {
		where = []string{"b.tsv @@ to_tsquery('english', ?)", "(b.scope && ?::text[]) IS TRUE", "b.workspace || '' = ?", "b.status || '' = ?"}
	}
	args := []any{textsearch.TSQuery(terms), keys, f.workspace, StatusActive}
	for _, id := range f.excludeIDs {
		where = append(where, "b.id <> ?")
		args = append(args, id)
	}
	args = append(args, f.cap()+1)
	return s.st.Q(`SELECT b.seq, b.content, b.confidence_overall, b.created_at, b.valid_from FROM beliefs b
		WHERE ` + strings.Join(where, " AND ") + ` ORDER BY b.seq + 0 DESC LIMIT ?`), args, !few
}

// sumKnown adds up the document frequencies of terms in known; a term
// known holds no count for makes it unbounded.
func sumKnown(known map[string]int, terms []string) int {
	sum := 0
	for _, t := range terms {
		n, ok := known[t]
		if !ok {
			return math.MaxInt
		}
		sum += n
	}
	return sum
}
