-- Bulk loading (issue 12): SQLite's full-text index moved from a trigger to
-- the code (internal/substrate/fts.go). PostgreSQL's tsv column is computed
-- with the row; nothing changes here. The migration keeps the two dialects'
-- versions in step.
SELECT 1;
