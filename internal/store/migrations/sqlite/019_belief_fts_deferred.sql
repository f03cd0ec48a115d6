-- Bulk loading (issue 12): beliefs enter the full-text index from the code
-- (internal/substrate/fts.go), a batch in one statement at the end of its
-- transaction, instead of row by row from a trigger: indexed row by row, each
-- statement savepoint flushed a new index segment, and searches seek every
-- segment. Deletes still leave the index through beliefs_fts_ad.
DROP TRIGGER beliefs_fts_ai;
