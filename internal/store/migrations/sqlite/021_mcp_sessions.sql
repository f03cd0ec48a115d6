-- Scale-out (issue 13): an MCP session over Streamable HTTP lives in the
-- store, so that any replica serves it. A replica that gets a request for a
-- session it does not hold re-creates the session from its row
-- (internal/mcpsession): the client's initialize parameters, its log level,
-- the tools it discovered on the bounded surface; and the conversations its
-- calls are bound to (mcp_transport_sessions).
CREATE TABLE mcp_sessions (
    id         TEXT PRIMARY KEY,
    surface    TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    params     TEXT NOT NULL,
    log_level  TEXT NOT NULL DEFAULT '',
    discovered TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    seen_at    BIGINT NOT NULL
);
CREATE INDEX mcp_sessions_seen ON mcp_sessions (seen_at);

CREATE TABLE mcp_transport_sessions (
    transport  TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    workspace  TEXT NOT NULL,
    session_id TEXT NOT NULL,
    bound_at   BIGINT NOT NULL,
    PRIMARY KEY (transport, user_id, workspace)
);
