-- Installation-wide settings, such as the key that signs pagination cursors
-- (shared by every replica, kept across restarts).
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
