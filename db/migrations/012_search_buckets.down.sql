CREATE OR REPLACE FUNCTION search_bucket(t timestamptz) RETURNS int
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT (extract(epoch FROM t)::bigint / 600)::int $$;

DROP INDEX IF EXISTS events_search_idx;
CREATE INDEX events_search_idx ON events USING gin (search, search_bucket(latest_evidence_at));

DROP FUNCTION IF EXISTS search_buckets(timestamptz);
