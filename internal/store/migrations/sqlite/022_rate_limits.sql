-- Scale-out (issue 13): the per-user HTTP request rate limit
-- (internal/quota, SharedLimiter) is kept in the store, so that replicas
-- sharing the database share one limit per user instead of each allowing the
-- whole rate. One row per subject (a user id) holds the GCRA's theoretical
-- arrival time (tat, Unix microseconds): the time at which the subject's
-- bucket would be full again. Each request decides and updates its row in one
-- upsert; admitted says whether the last request was admitted. A row whose
-- tat is past says nothing a missing row does not, and quota.PruneRateLimits
-- deletes it. There is no index on tat: every request changes it, and an
-- index would make each update write the index too (on PostgreSQL, no
-- heap-only update); the hourly prune scans the table, one row per user seen
-- within the hour.
CREATE TABLE rate_limits (
    subject  TEXT PRIMARY KEY,
    tat      BIGINT NOT NULL,
    admitted INTEGER NOT NULL
);
