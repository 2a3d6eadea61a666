-- New events enter events_search_idx through GIN's pending list, which
-- every search probe reads in full. At its default size (4 MB, about 8,000
-- events) a probe of a full list read 381 pages more: a news-style search
-- went from 7.7 to 22.6 ms (c=1 p50, every request computed, 1M events),
-- its PostgreSQL time from 9 to 23 ms. A list of 256 kB is merged into the
-- index every few hundred events, in bulk as before: ingest measured the
-- same (4,332 against 4,384 events/s, alternated three times), and a probe
-- reads at most 32 pages of it.
ALTER INDEX events_search_idx SET (gin_pending_list_limit = 256);
SELECT gin_clean_pending_list('events_search_idx'::regclass);
