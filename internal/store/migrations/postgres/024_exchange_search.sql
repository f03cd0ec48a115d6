-- Searchable conversation memory (issue 23): exchange_search finds
-- exchanges through a full-text index of their content and ranks them with
-- BM25 in Go (internal/conversation, search.go), as belief_query does
-- beliefs: a tsvector computed with the row, under a GIN index that updates
-- in place (see 003). The index on (workspace, created_at) serves the
-- per-workspace statistics and the validity window.
ALTER TABLE exchanges ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED;
CREATE INDEX exchanges_tsv ON exchanges USING GIN (tsv) WITH (fastupdate = off);
CREATE INDEX exchanges_ws_created ON exchanges (workspace, created_at);
