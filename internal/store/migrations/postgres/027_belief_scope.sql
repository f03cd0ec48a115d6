-- Tension candidates found through indexes (issue 23, internal/substrate/
-- scope_pg.go): each belief carries its scope, the keys a tension search
-- filters on ('d' <US> workspace <US> domain key; 'e' <US> entity id, <US>
-- being the unit separator, chr(31)), under a GIN index, so that the search
-- intersects the full-text matches with its scope in the indexes instead of
-- walking the beliefs newest first. Existing beliefs get theirs here.
ALTER TABLE beliefs ADD COLUMN scope text[];
UPDATE beliefs b SET scope = ARRAY(
    SELECT 'd' || chr(31) || b.workspace || chr(31) || b.domain_key WHERE b.domain_key <> ''
    UNION ALL
    SELECT 'e' || chr(31) || be.entity_id FROM belief_entities be WHERE be.belief_id = b.id);
CREATE INDEX beliefs_scope ON beliefs USING GIN (scope) WITH (fastupdate = off);
