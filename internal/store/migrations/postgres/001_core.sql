-- Core schema: substrate (beliefs, entities, tensions), conversations, traces.
-- Timestamps are Unix microseconds (UTC); JSON values are stored as text.

CREATE TABLE beliefs (
    seq                BIGSERIAL PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    workspace          TEXT    NOT NULL,
    content            TEXT    NOT NULL,
    confidence         TEXT    NOT NULL,
    confidence_overall DOUBLE PRECISION NOT NULL,
    domain_path        TEXT    NOT NULL,
    domain_key         TEXT    NOT NULL,
    source_type        TEXT,
    source_ref         TEXT,
    source_title       TEXT,
    valid_from         BIGINT,
    valid_until        BIGINT,
    status             TEXT    NOT NULL,
    supersedes         TEXT,
    superseded_by      TEXT,
    supersede_reason   TEXT,
    created_at         BIGINT  NOT NULL,
    updated_at         BIGINT  NOT NULL,
    tsv                tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED
);
CREATE INDEX beliefs_ws_status_created ON beliefs (workspace, status, created_at);
CREATE INDEX beliefs_ws_domain ON beliefs (workspace, domain_key);

CREATE INDEX beliefs_tsv ON beliefs USING GIN (tsv);

CREATE TABLE entities (
    id         TEXT    PRIMARY KEY,
    workspace  TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    name_key   TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    aliases    TEXT    NOT NULL,
    created_at BIGINT  NOT NULL,
    updated_at BIGINT  NOT NULL,
    UNIQUE (workspace, name_key)
);

CREATE TABLE entity_aliases (
    entity_id TEXT NOT NULL REFERENCES entities (id),
    workspace TEXT NOT NULL,
    alias_key TEXT NOT NULL,
    PRIMARY KEY (entity_id, alias_key)
);
CREATE INDEX entity_aliases_ws_key ON entity_aliases (workspace, alias_key);

CREATE TABLE belief_entities (
    belief_id TEXT NOT NULL REFERENCES beliefs (id),
    entity_id TEXT NOT NULL REFERENCES entities (id),
    role      TEXT NOT NULL,
    PRIMARY KEY (belief_id, entity_id, role)
);
CREATE INDEX belief_entities_entity ON belief_entities (entity_id);

CREATE TABLE tensions (
    id            TEXT    PRIMARY KEY,
    workspace     TEXT    NOT NULL,
    belief_a      TEXT    NOT NULL REFERENCES beliefs (id),
    belief_b      TEXT    NOT NULL REFERENCES beliefs (id),
    type          TEXT    NOT NULL,
    severity      TEXT    NOT NULL,
    severity_rank BIGINT  NOT NULL,
    status        TEXT    NOT NULL,
    description   TEXT    NOT NULL,
    resolution    TEXT,
    action        TEXT,
    created_at    BIGINT  NOT NULL,
    resolved_at   BIGINT
);
CREATE INDEX tensions_ws_status ON tensions (workspace, status, created_at);
CREATE INDEX tensions_a ON tensions (belief_a);
CREATE INDEX tensions_b ON tensions (belief_b);

CREATE TABLE conversations (
    id               TEXT    PRIMARY KEY,
    workspace        TEXT    NOT NULL,
    platform         TEXT    NOT NULL,
    project_context  TEXT,
    external_room_id TEXT,
    metadata         TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    summary          TEXT,
    themes           TEXT    NOT NULL,
    created_at       BIGINT  NOT NULL,
    updated_at       BIGINT  NOT NULL,
    ended_at         BIGINT
);
CREATE INDEX conversations_ws_created ON conversations (workspace, created_at);

CREATE TABLE traces (
    seq          BIGSERIAL PRIMARY KEY,
    request_id   TEXT    NOT NULL,
    surface      TEXT    NOT NULL,
    toolbox      TEXT    NOT NULL,
    server       TEXT    NOT NULL,
    tool         TEXT    NOT NULL,
    source       TEXT    NOT NULL,
    session_id   TEXT,
    workspace    TEXT    NOT NULL,
    started_at   BIGINT  NOT NULL,
    duration_us  BIGINT  NOT NULL,
    outcome      TEXT    NOT NULL,
    error_code   TEXT,
    args_bytes   BIGINT  NOT NULL,
    result_bytes BIGINT  NOT NULL
);
CREATE INDEX traces_ws_started ON traces (workspace, started_at);
CREATE INDEX traces_tool ON traces (tool, started_at);
CREATE INDEX traces_session ON traces (session_id);
