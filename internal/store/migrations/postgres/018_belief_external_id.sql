-- Bulk loading (issue 12): a belief may carry the caller's own id, and
-- loading the same id into a workspace again changes nothing.
ALTER TABLE beliefs ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX beliefs_ws_external_id ON beliefs (workspace, external_id) WHERE external_id IS NOT NULL;

-- The transaction that created a belief (issue 12): belief creation judges
-- tensions outside its write transaction, against a snapshot, and then
-- compares the new belief with those committed since, which are the rows
-- whose creating transaction that snapshot did not see. Rows created before
-- this migration have none (they are older than any snapshot).
ALTER TABLE beliefs ADD COLUMN created_xid xid8;
ALTER TABLE beliefs ALTER COLUMN created_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX beliefs_created_xid ON beliefs (created_xid) WHERE created_xid IS NOT NULL;
