-- Workspaces have owners and members (issue 10): a user who is not an admin
-- acts only in workspaces they own or belong to. A workspace nobody holds
-- becomes its first user's. Workspaces that hold data from before owners
-- were recorded, and "default", have no owner: only admins use them until
-- an admin gives them one (nexus workspaces set-owner).

CREATE TABLE workspaces (
    id         TEXT    PRIMARY KEY,
    owner_id   TEXT,
    created_at BIGINT  NOT NULL
);
CREATE INDEX workspaces_owner ON workspaces (owner_id);

CREATE TABLE workspace_members (
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id),
    user_id      TEXT    NOT NULL,
    created_at   BIGINT  NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_user ON workspace_members (user_id);

INSERT INTO workspaces (id, owner_id, created_at)
SELECT workspace, NULL, 0 FROM (
    SELECT workspace FROM conversations
    UNION SELECT workspace FROM beliefs
    UNION SELECT workspace FROM entities
    UNION SELECT workspace FROM patterns
    UNION SELECT workspace FROM insights
    UNION SELECT 'default'
) AS existing WHERE true
ON CONFLICT (id) DO NOTHING;
