-- Users known by an identity provider (OAuth resource-server mode, issue
-- 10): an access token's issuer and subject name one Nexus user, created
-- the first time the identity is seen.
CREATE TABLE user_identities (
    issuer     TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    created_at BIGINT  NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_user ON user_identities (user_id);
