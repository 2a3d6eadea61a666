-- Search: candidates that cost what the matches cost, and the corpus
-- statistics BM25 ranks by (docs/api/search.md).
--
-- events_search_idx gains a second key, the event's ten-minute time bucket
-- (btree_gin), so one GIN scan answers "events holding these words in the
-- last few buckets": GIN walks the bucket entries of that short range and
-- skips through the word's posting list, instead of decoding every match of
-- a common word (63k for "bitcoin" at a million events) before the newest
-- can be picked. A query without a bucket condition uses it as before.
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- search_bucket numbers ten-minute slices of time. extract(epoch) of a
-- timestamptz does not depend on the session's time zone, so the wrapper
-- may be IMMUTABLE (needed in an index).
CREATE OR REPLACE FUNCTION search_bucket(t timestamptz) RETURNS int
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT (extract(epoch FROM t)::bigint / 600)::int $$;

DROP INDEX IF EXISTS events_search_idx;
CREATE INDEX events_search_idx ON events USING gin (search, search_bucket(latest_evidence_at));

-- Corpus statistics, kept current by the statement-level triggers below in
-- the transaction that writes the events (ingest, the bulk loader's COPY):
-- search_terms holds each lexeme's document frequency (BM25's IDF),
-- search_corpus the number of events, their total lexeme count (the average
-- document length) and the span of their times (the event rate, which sizes
-- a bucket range).
CREATE TABLE search_terms (
    term text   PRIMARY KEY,
    df   bigint NOT NULL
);

CREATE TABLE search_corpus (
    id       boolean PRIMARY KEY DEFAULT true CHECK (id),
    docs     bigint  NOT NULL DEFAULT 0,
    lexemes  bigint  NOT NULL DEFAULT 0,
    first_at timestamptz,
    last_at  timestamptz
);
INSERT INTO search_corpus (id) VALUES (true);

-- Writers never wait on each other for these counters during their
-- transactions (as with data_version): the statement-level triggers below
-- append the statement's changes to search_stats_pending, tagged with the
-- transaction, and a deferred constraint trigger folds the transaction's
-- rows into search_terms and search_corpus when it commits, taking the
-- counters' row locks only for the instant of the commit (in term order, so
-- two commits lock them in the same order). A rolled-back transaction's rows
-- vanish with it.
CREATE TABLE search_stats_pending (
    xact     xid8   NOT NULL,
    term     text,
    delta    bigint NOT NULL DEFAULT 0,
    docs     bigint NOT NULL DEFAULT 0,
    lexemes  bigint NOT NULL DEFAULT 0,
    first_at timestamptz,
    last_at  timestamptz
);
CREATE INDEX search_stats_pending_xact_idx ON search_stats_pending (xact);

CREATE FUNCTION search_stats_fold() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH d AS (
        DELETE FROM search_stats_pending WHERE xact = NEW.xact
        RETURNING term, delta, docs, lexemes, first_at, last_at
    ), t AS (
        INSERT INTO search_terms AS t (term, df)
        SELECT term, sum(delta) FROM d WHERE term IS NOT NULL GROUP BY term HAVING sum(delta) <> 0 ORDER BY term
        ON CONFLICT (term) DO UPDATE SET df = t.df + EXCLUDED.df
    )
    UPDATE search_corpus c SET docs = c.docs + s.n, lexemes = c.lexemes + s.l,
        first_at = least(c.first_at, s.lo), last_at = greatest(c.last_at, s.hi)
    FROM (SELECT coalesce(sum(docs), 0) AS n, coalesce(sum(lexemes), 0) AS l, min(first_at) AS lo, max(last_at) AS hi
          FROM d WHERE term IS NULL) s
    WHERE c.id AND (s.n <> 0 OR s.l <> 0 OR s.hi IS NOT NULL);
    RETURN NULL;
END $$;

-- One pending row per statement carries the corpus change (term NULL); the
-- fold runs once per such row, the first folding the whole transaction.
CREATE CONSTRAINT TRIGGER search_stats_pending_fold_trg
    AFTER INSERT ON search_stats_pending
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.term IS NULL) EXECUTE FUNCTION search_stats_fold();

CREATE FUNCTION search_stats_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_stats_pending (xact, term, delta)
    SELECT pg_current_xact_id(), x, count(*) FROM search_new n, unnest(tsvector_to_array(n.search)) AS x GROUP BY x;
    INSERT INTO search_stats_pending (xact, docs, lexemes, first_at, last_at)
    SELECT pg_current_xact_id(), count(*), coalesce(sum(length(search)), 0), min(latest_evidence_at), max(latest_evidence_at)
    FROM search_new HAVING count(*) > 0;
    RETURN NULL;
END $$;

CREATE FUNCTION search_stats_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH ch AS (
        SELECT o.search AS os, n.search AS ns FROM search_old o JOIN search_new n ON n.id = o.id
        WHERE o.search IS DISTINCT FROM n.search
    )
    INSERT INTO search_stats_pending (xact, term, delta)
    SELECT pg_current_xact_id(), x, sum(c) FROM (
        SELECT unnest(tsvector_to_array(ns)) AS x, 1 AS c FROM ch
        UNION ALL
        SELECT unnest(tsvector_to_array(os)), -1 FROM ch
    ) z GROUP BY x HAVING sum(c) <> 0;
    INSERT INTO search_stats_pending (xact, lexemes, last_at)
    SELECT pg_current_xact_id(), coalesce(sum(length(n.search)) - sum(length(o.search)), 0), max(n.latest_evidence_at)
    FROM search_old o JOIN search_new n ON n.id = o.id
    WHERE o.search IS DISTINCT FROM n.search OR o.latest_evidence_at IS DISTINCT FROM n.latest_evidence_at
    HAVING count(*) > 0;
    RETURN NULL;
END $$;

CREATE FUNCTION search_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_stats_pending (xact, term, delta)
    SELECT pg_current_xact_id(), x, -count(*) FROM search_old o, unnest(tsvector_to_array(o.search)) AS x GROUP BY x;
    INSERT INTO search_stats_pending (xact, docs, lexemes)
    SELECT pg_current_xact_id(), -count(*), -coalesce(sum(length(search)), 0) FROM search_old HAVING count(*) > 0;
    RETURN NULL;
END $$;

CREATE FUNCTION search_stats_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE search_terms, search_stats_pending;
    UPDATE search_corpus SET docs = 0, lexemes = 0, first_at = NULL, last_at = NULL WHERE id;
    RETURN NULL;
END $$;

CREATE TRIGGER events_search_stats_insert_trg AFTER INSERT ON events
    REFERENCING NEW TABLE AS search_new FOR EACH STATEMENT EXECUTE FUNCTION search_stats_insert();
CREATE TRIGGER events_search_stats_update_trg AFTER UPDATE ON events
    REFERENCING OLD TABLE AS search_old NEW TABLE AS search_new FOR EACH STATEMENT EXECUTE FUNCTION search_stats_update();
CREATE TRIGGER events_search_stats_delete_trg AFTER DELETE ON events
    REFERENCING OLD TABLE AS search_old FOR EACH STATEMENT EXECUTE FUNCTION search_stats_delete();
CREATE TRIGGER events_search_stats_truncate_trg AFTER TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION search_stats_truncate();

-- The events already stored.
INSERT INTO search_terms (term, df) SELECT word, ndoc FROM ts_stat('SELECT search FROM events');
UPDATE search_corpus c SET docs = s.n, lexemes = s.l, first_at = s.lo, last_at = s.hi
FROM (SELECT count(*) AS n, coalesce(sum(length(search)), 0) AS l,
             min(latest_evidence_at) AS lo, max(latest_evidence_at) AS hi FROM events) s
WHERE c.id;
