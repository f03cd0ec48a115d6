-- Scale-out (issue 13): periodic background work (retention, trace pruning)
-- runs once per period across the replicas sharing a database. A replica
-- claims a job's run by moving ran_at forward only when the last run is
-- older than the period (store.Store.Claim).
CREATE TABLE job_runs (
    name   TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    ran_at BIGINT NOT NULL
);
