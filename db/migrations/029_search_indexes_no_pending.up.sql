-- New events entered the two search indexes through GIN's pending list
-- (at most 256 kB since migration 016), which every search probe reads in
-- full, and a search makes several probes. Events arrive all day and
-- autovacuum's insert threshold at a million events is 200,000 rows, so
-- the list is merged only when it fills: a search read half a list on
-- average. At 1M events (tests/bench/NOTES.md), 11–14 pending pages made
-- a news-style search 2–3.5 ms slower (c=1 p50 8.2–9.8 ms against
-- 6.2–6.3 once the lists were merged); without fast update an event's
-- words enter the index when it is written, and ingest measured 889–943
-- against 1,059–1,135 events/s, alternated twice. Searches far outnumber
-- new events. The demo seed drops and rebuilds these indexes around its
-- load (db.BulkLoad), so seeding does not pay for it.
ALTER INDEX events_search_idx SET (fastupdate = off);
ALTER INDEX events_search_day_idx SET (fastupdate = off);
SELECT gin_clean_pending_list('events_search_idx'::regclass);
SELECT gin_clean_pending_list('events_search_day_idx'::regclass);
