-- Search candidates at three time resolutions (docs/api/search.md).
--
-- events_search_idx's second key becomes the event's time buckets at four
-- widths — ten minutes, an hour, a day and a week — as one int array
-- (array_ops), so a probe names the few buckets that should hold the
-- matches it keeps: ten-minute buckets for a word many events of each hour
-- hold, hours for a common word, days or weeks for a rarer one. GIN looks
-- each named bucket up like a word and, the events of a bucket lying
-- together in the heap, skips through the word's postings to them: a probe
-- costs a few lookups and the matches in those buckets, where migration
-- 009's range of ten-minute buckets (a partial match) read every event of
-- the range. The feeds' topic names the window's days and hours the same
-- way.
--
-- A code is the bucket's number times four plus its level (0 ten minutes,
-- 1 hour, 2 day, 3 week), so the four never collide. extract(epoch) of a
-- timestamptz does not depend on the session's time zone, so the function
-- may be IMMUTABLE (needed in an index).
CREATE FUNCTION search_buckets(t timestamptz) RETURNS int[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT ARRAY[
        (floor(extract(epoch FROM t) / 600)::int) * 4,
        (floor(extract(epoch FROM t) / 3600)::int) * 4 + 1,
        (floor(extract(epoch FROM t) / 86400)::int) * 4 + 2,
        (floor(extract(epoch FROM t) / 604800)::int) * 4 + 3] $$;

DROP INDEX IF EXISTS events_search_idx;
CREATE INDEX events_search_idx ON events USING gin (search_buckets(latest_evidence_at), search);

DROP FUNCTION IF EXISTS search_bucket(timestamptz);
