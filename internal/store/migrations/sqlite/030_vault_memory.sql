-- The vault agents' memoryManager (issue 28) keeps its workspaces, sessions
-- and states in Nexus's own model: a memoryManager workspace is a Nexus
-- workspace with a name, a root folder in a vault and its context (purpose,
-- goal, workflows, key files, preferences: JSON); a session is a
-- conversation; a state is a named snapshot of a session's context.
ALTER TABLE workspaces ADD COLUMN name TEXT;
ALTER TABLE workspaces ADD COLUMN description TEXT;
ALTER TABLE workspaces ADD COLUMN vault TEXT;
ALTER TABLE workspaces ADD COLUMN root_folder TEXT;
ALTER TABLE workspaces ADD COLUMN context TEXT;
ALTER TABLE workspaces ADD COLUMN last_accessed BIGINT;

CREATE TABLE conversation_states (
    id              TEXT    PRIMARY KEY,
    conversation_id TEXT    NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    workspace       TEXT    NOT NULL,
    name            TEXT    NOT NULL,
    description     TEXT,
    tags            TEXT    NOT NULL,
    snapshot        TEXT    NOT NULL,
    created_at      BIGINT  NOT NULL
);
CREATE INDEX conversation_states_conversation ON conversation_states (conversation_id, created_at);
