-- Searchable conversation memory (issue 23): exchange_search finds
-- exchanges through a full-text index of their content and ranks them with
-- BM25 in Go (internal/conversation, search.go), as belief_query does
-- beliefs. The index holds the exchanges' content by rowid (exchanges has no
-- integer key; nothing runs VACUUM, which could renumber rowids) and follows
-- the table through triggers, in the exchange's own transaction. The index
-- on (workspace, created_at) serves the per-workspace statistics and the
-- validity window.
CREATE VIRTUAL TABLE exchanges_fts USING fts5(
    content, content='exchanges', content_rowid='rowid', tokenize='porter unicode61'
);
INSERT INTO exchanges_fts(exchanges_fts) VALUES ('rebuild');
CREATE TRIGGER exchanges_fts_ai AFTER INSERT ON exchanges BEGIN
    INSERT INTO exchanges_fts(rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER exchanges_fts_ad AFTER DELETE ON exchanges BEGIN
    INSERT INTO exchanges_fts(exchanges_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
CREATE TRIGGER exchanges_fts_au AFTER UPDATE OF content ON exchanges BEGIN
    INSERT INTO exchanges_fts(exchanges_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO exchanges_fts(rowid, content) VALUES (new.rowid, new.content);
END;
CREATE INDEX exchanges_ws_created ON exchanges (workspace, created_at);
