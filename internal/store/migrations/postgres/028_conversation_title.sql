-- A conversation's own title (the web chat's Rename, session_rename): NULL
-- until someone names it, when clients derive one (its first message).
ALTER TABLE conversations ADD COLUMN title TEXT;
