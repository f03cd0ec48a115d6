-- BYOK credentials (tn_user_byok_*, issue 10). An API key is stored only
-- sealed (internal/secrets: envelope encryption, AAD
-- "user:USER_ID/credential:ID"), NULL for ollama, which has no key; the
-- fingerprint is keyed by the keyring and the mask shows the last characters.
CREATE TABLE tn_credentials (
    id          TEXT    PRIMARY KEY,
    user_id     TEXT    NOT NULL,
    provider    TEXT    NOT NULL,
    label       TEXT    NOT NULL,
    base_url    TEXT    NOT NULL,
    sealed      TEXT,
    fingerprint TEXT    NOT NULL,
    masked      TEXT    NOT NULL,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL,
    UNIQUE (user_id, label)
);
