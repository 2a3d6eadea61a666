-- Older search candidates keyed by word and day (docs/api/search.md,
-- "Candidates").
--
-- A probe asks events_search_idx for its words' newest matches group of
-- time buckets by group. GIN intersects a named bucket's entry with the
-- words' postings, and a bucket's entry lists every event of the bucket:
-- a group of day or week buckets decodes every event of those days whatever
-- the words (at a million events, 'lost' & 'peg' — two words never in one
-- event — cost 14 ms in three week buckets, 1.3 ms from the words' whole
-- postings). events_search_day_idx keys each of an event's words with the
-- day it falls in ('peg@20785'), so a probe that reaches back past its
-- newest hours asks each older day for its words at that day: GIN reads
-- the words' postings of that day only (0.07 ms a day for the same two
-- words with a third), and the heap only for the day's matches.
--
-- The day is the number of whole days since the epoch, as search_buckets
-- counts its day buckets; extract(epoch) of a timestamptz does not depend
-- on the session's time zone, so the function may be IMMUTABLE (needed in
-- an index). Phrases are not kept: a probe with a phrase checks the event's
-- own search vector as well. The words are joined and split again rather
-- than keyed one by one in a subquery: a fifth of the time to build.
CREATE OR REPLACE FUNCTION search_day_lexemes(search tsvector, t timestamptz) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT CASE WHEN length(search) = 0 THEN ''::tsvector ELSE array_to_tsvector(string_to_array(
        array_to_string(tsvector_to_array(search), '@' || floor(extract(epoch FROM t) / 86400)::int::text || chr(1))
        || '@' || floor(extract(epoch FROM t) / 86400)::int::text, chr(1))) END $$;

-- A small pending list, as events_search_idx's (migration 016): every
-- probe reads it in full.
CREATE INDEX IF NOT EXISTS events_search_day_idx ON events
    USING gin (search_day_lexemes(search, latest_evidence_at)) WITH (gin_pending_list_limit = 256);
