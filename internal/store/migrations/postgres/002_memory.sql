-- Conversation memory (vkb): exchanges of a conversation, patterns, insights.

ALTER TABLE conversations ADD COLUMN exchange_count BIGINT NOT NULL DEFAULT 0;
CREATE INDEX conversations_ws_room ON conversations (workspace, external_room_id);
CREATE INDEX conversations_ws_status ON conversations (workspace, status, created_at);

CREATE TABLE exchanges (
    id              TEXT    PRIMARY KEY,
    conversation_id TEXT    NOT NULL REFERENCES conversations (id),
    workspace       TEXT    NOT NULL,
    seq             BIGINT  NOT NULL,
    role            TEXT    NOT NULL,
    content         TEXT    NOT NULL,
    tool_uses       TEXT    NOT NULL,
    created_at      BIGINT  NOT NULL,
    UNIQUE (conversation_id, seq)
);

CREATE TABLE patterns (
    seq           BIGSERIAL PRIMARY KEY,
    id            TEXT    NOT NULL UNIQUE,
    workspace     TEXT    NOT NULL,
    type          TEXT    NOT NULL,
    description   TEXT    NOT NULL,
    confidence    DOUBLE PRECISION NOT NULL,
    status        TEXT    NOT NULL,
    evidence      TEXT    NOT NULL,
    created_at    BIGINT  NOT NULL,
    updated_at    BIGINT  NOT NULL,
    reinforced_at BIGINT  NOT NULL,
    tsv           tsvector GENERATED ALWAYS AS (to_tsvector('english', description)) STORED
);
CREATE INDEX patterns_ws_type ON patterns (workspace, type, confidence);
CREATE INDEX patterns_tsv ON patterns USING GIN (tsv);

CREATE TABLE insights (
    id         TEXT    PRIMARY KEY,
    workspace  TEXT    NOT NULL,
    session_id TEXT    NOT NULL REFERENCES conversations (id),
    belief_id  TEXT    NOT NULL REFERENCES beliefs (id),
    created_at BIGINT  NOT NULL
);
CREATE INDEX insights_ws_session ON insights (workspace, session_id, created_at);
CREATE INDEX insights_ws_created ON insights (workspace, created_at);
