-- Names are written rarely (an entity's creation, a new alias) and read on
-- every lookup by name and every fuzzy resolution. With GIN's fast update,
-- new names wait in the index's pending list until a vacuum merges them,
-- and every probe reads that list in full. The planner costs it too: right
-- after the demo world's 1,500 names were written, all of them pending,
-- the generic plan of long-name resolution (search.ResolveSQL) read
-- entity_names sequentially and computed the similarity of every name,
-- and it went back to the trigram index only once autovacuum had run.
-- Without fast update a name enters the index when written, and probes
-- and plans do not depend on when a vacuum last ran.
ALTER INDEX entity_names_trgm_idx SET (fastupdate = off);
SELECT gin_clean_pending_list('entity_names_trgm_idx'::regclass);
