-- Users and their API tokens (issue 10). A token is stored only as the
-- SHA-256 of its text; the text is shown once, when it is made.

CREATE TABLE users (
    id         TEXT    PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    tier       TEXT    NOT NULL,
    role       TEXT    NOT NULL,
    disabled   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE user_tokens (
    id           TEXT    PRIMARY KEY,
    user_id      TEXT    NOT NULL REFERENCES users (id),
    hash         TEXT    NOT NULL UNIQUE,
    label        TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
CREATE INDEX user_tokens_user ON user_tokens (user_id, created_at);
