-- Conversation memory (vkb): exchanges of a conversation, patterns, insights.

ALTER TABLE conversations ADD COLUMN exchange_count INTEGER NOT NULL DEFAULT 0;
CREATE INDEX conversations_ws_room ON conversations (workspace, external_room_id);
CREATE INDEX conversations_ws_status ON conversations (workspace, status, created_at);

CREATE TABLE exchanges (
    id              TEXT    PRIMARY KEY,
    conversation_id TEXT    NOT NULL REFERENCES conversations (id),
    workspace       TEXT    NOT NULL,
    seq             INTEGER NOT NULL,
    role            TEXT    NOT NULL,
    content         TEXT    NOT NULL,
    tool_uses       TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    UNIQUE (conversation_id, seq)
);

CREATE TABLE patterns (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT    NOT NULL UNIQUE,
    workspace     TEXT    NOT NULL,
    type          TEXT    NOT NULL,
    description   TEXT    NOT NULL,
    confidence    REAL    NOT NULL,
    status        TEXT    NOT NULL,
    evidence      TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    reinforced_at INTEGER NOT NULL
);
CREATE INDEX patterns_ws_type ON patterns (workspace, type, confidence);

CREATE VIRTUAL TABLE patterns_fts USING fts5(
    description, content='patterns', content_rowid='seq', tokenize='porter unicode61'
);
CREATE TRIGGER patterns_fts_ai AFTER INSERT ON patterns BEGIN
    INSERT INTO patterns_fts(rowid, description) VALUES (new.seq, new.description);
END;
CREATE TRIGGER patterns_fts_ad AFTER DELETE ON patterns BEGIN
    INSERT INTO patterns_fts(patterns_fts, rowid, description) VALUES ('delete', old.seq, old.description);
END;

CREATE TABLE insights (
    id         TEXT    PRIMARY KEY,
    workspace  TEXT    NOT NULL,
    session_id TEXT    NOT NULL REFERENCES conversations (id),
    belief_id  TEXT    NOT NULL REFERENCES beliefs (id),
    created_at INTEGER NOT NULL
);
CREATE INDEX insights_ws_session ON insights (workspace, session_id, created_at);
CREATE INDEX insights_ws_created ON insights (workspace, created_at);
