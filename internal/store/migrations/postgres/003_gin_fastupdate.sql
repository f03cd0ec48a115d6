-- Full-text indexes update in place: GIN's pending list makes searches scan
-- every entry added since the last vacuum, which turns millisecond queries
-- into tens of milliseconds under a steady stream of new beliefs.
ALTER INDEX beliefs_tsv SET (fastupdate = off);
ALTER INDEX patterns_tsv SET (fastupdate = off);
