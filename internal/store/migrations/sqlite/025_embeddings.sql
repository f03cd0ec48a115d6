-- Hybrid search (issue 23): one embedding vector per belief or exchange,
-- from the configured embedding model (internal/embed). vector holds dims
-- little-endian float32s as the provider returned them (not normalized);
-- content_hash is the SHA-256 of the text embedded. A row is replaced
-- (deleted and inserted, so that it gets a new seq) when its text is
-- embedded again, e.g. by another model: readers load a workspace's vectors
-- once and then only the rows whose seq is above the highest they hold.
-- Exact cosine runs in Go (embed.Index); there is no vector index.
CREATE TABLE embeddings (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    workspace    TEXT    NOT NULL,
    model        TEXT    NOT NULL,
    dims         INTEGER NOT NULL,
    vector       BLOB    NOT NULL,
    content_hash BLOB    NOT NULL,
    created_at   INTEGER NOT NULL,
    UNIQUE (kind, id)
);
CREATE INDEX embeddings_ws ON embeddings (kind, workspace, model, seq);
