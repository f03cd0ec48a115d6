-- Traces older than the retention setting are deleted by started_at.
CREATE INDEX traces_started ON traces (started_at);
