-- PostgreSQL-only change (GIN fastupdate); kept so both dialects share version numbers.
SELECT 1;
