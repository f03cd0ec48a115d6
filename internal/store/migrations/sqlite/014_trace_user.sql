-- Who made each traced call (issue 10): /api/traces shows a user their own.
ALTER TABLE traces ADD COLUMN user_id TEXT;
CREATE INDEX traces_user ON traces (user_id, seq);
