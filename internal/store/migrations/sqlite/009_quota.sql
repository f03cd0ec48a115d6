-- Prompt quotas (internal/quota, ADR-018): how many prompts a subject (a
-- user id) has used in a window (the UTC day, "2026-11-23"). The column is
-- "period", not "window", which PostgreSQL reserves. Rows of past days are
-- deleted by quota.Prune.

CREATE TABLE quota_usage (
    subject    TEXT    NOT NULL,
    period     TEXT    NOT NULL,
    used       INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (subject, period)
);

CREATE INDEX quota_usage_period ON quota_usage (period);
