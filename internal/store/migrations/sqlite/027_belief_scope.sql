-- PostgreSQL's beliefs gain a scope column under a GIN index (postgres/027).
-- SQLite's tension search reads its window's rows through the server's
-- cache instead (internal/substrate/search.go, windowCandidates); nothing
-- changes here.
SELECT 1;
