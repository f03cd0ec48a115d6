-- GET /api/traces pages newest first by seq under a filter; these indexes
-- serve each filter in seq order instead of scanning every trace.
DROP INDEX traces_ws_started;
DROP INDEX traces_tool;
DROP INDEX traces_session;
CREATE INDEX traces_ws_seq ON traces (workspace, seq);
CREATE INDEX traces_tool_seq ON traces (tool, seq);
CREATE INDEX traces_session_seq ON traces (session_id, seq);
