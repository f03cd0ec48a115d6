package substrate

import (
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

// scopedCandidatesSQL is candidatesSQL's query for fromScope (and its
// arguments): the same beliefs, newest first. "seq + 0" keeps the planner
// off the primary key's backward walk.
func (s *Server) scopedCandidatesSQL(terms []string, f searchFilter) (string, []any) {
	keys := scopeKeys(f.workspace, f.domainExact, f.entityIDs)
	where := []string{"b.tsv @@ to_tsquery('english', ?)", "b.scope && ARRAY[" + placeholders(len(keys)) + "]::text[]",
		"b.workspace = ?", "b.status = ?"}
	args := []any{textsearch.TSQuery(terms)}
	for _, k := range keys {
		args = append(args, k)
	}
	args = append(args, f.workspace, StatusActive)
	for _, id := range f.excludeIDs {
		where = append(where, "b.id <> ?")
		args = append(args, id)
	}
	args = append(args, f.cap()+1)
	return s.st.Q(`SELECT b.seq, b.content, b.confidence_overall, b.created_at, b.valid_from FROM beliefs b
		WHERE ` + strings.Join(where, " AND ") + ` ORDER BY b.seq + 0 DESC LIMIT ?`), args
}
