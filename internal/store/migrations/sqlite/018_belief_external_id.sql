-- Bulk loading (issue 12): a belief may carry the caller's own id, and
-- loading the same id into a workspace again changes nothing.
ALTER TABLE beliefs ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX beliefs_ws_external_id ON beliefs (workspace, external_id) WHERE external_id IS NOT NULL;
