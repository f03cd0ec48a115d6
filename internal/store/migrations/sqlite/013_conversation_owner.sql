-- Who started a conversation, and their tier then (issue 10): tutoring
-- sessions record it, so that retention can delete anonymous users' old
-- sessions and authorization can scope conversations to their owners.
ALTER TABLE conversations ADD COLUMN owner_id TEXT;
ALTER TABLE conversations ADD COLUMN owner_tier TEXT;
CREATE INDEX conversations_owner ON conversations (owner_id, updated_at);
