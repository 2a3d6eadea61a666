-- search_corpus.first_at and last_at are the span of the events' times. A
-- search reads them: its probes walk time buckets down from last_at and
-- size their steps by the span, its ranking counts an event's age from
-- last_at, and a search given no clock reads its time words ("today",
-- "this week") against last_at. The fold only ever widened the span
-- (least/greatest), so deleting the newest events, or moving an event back
-- in time, left last_at where no event is: every search then probed the
-- empty buckets between the two and read its time words against a moment
-- with no news. A mistyped year, ingested and deleted, would have moved it
-- a year ahead for good. In the benchmark the live-push scenario's events,
-- deleted after it, left last_at hours past the newest seeded event, and a
-- news-style search cost PostgreSQL 2.5 times as much
-- (tests/bench/NOTES.md).
--
-- The removal triggers now record the span of the times they take away
-- (gone_first, gone_last). When that span reaches an end of the corpus's,
-- the fold reads the span again from events_recency_idx (two index
-- descents) in a statement of its own, after its update of the corpus row
-- has taken that row's lock: under READ COMMITTED the statement's snapshot
-- sees every transaction that folded before it, so a concurrent writer's
-- newer event is never dropped from the span. Other removals cost nothing
-- more.
ALTER TABLE search_stats_pending ADD COLUMN gone_first timestamptz, ADD COLUMN gone_last timestamptz;

CREATE OR REPLACE FUNCTION search_stats_fold() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    lo timestamptz;
    hi timestamptz;
BEGIN
    -- The fold of migration 009, which now also returns the span the
    -- transaction took away (data-modifying WITH queries run to completion
    -- whether or not the main query reads them).
    WITH d AS (
        DELETE FROM search_stats_pending WHERE xact = NEW.xact
        RETURNING term, delta, docs, lexemes, first_at, last_at, gone_first, gone_last
    ), t AS (
        INSERT INTO search_terms AS t (term, df)
        SELECT term, sum(delta) FROM d WHERE term IS NOT NULL GROUP BY term HAVING sum(delta) <> 0 ORDER BY term
        ON CONFLICT (term) DO UPDATE SET df = t.df + EXCLUDED.df
    ), u AS (
        UPDATE search_corpus c SET docs = c.docs + s.n, lexemes = c.lexemes + s.l,
            first_at = least(c.first_at, s.lo), last_at = greatest(c.last_at, s.hi)
        FROM (SELECT coalesce(sum(docs), 0) AS n, coalesce(sum(lexemes), 0) AS l, min(first_at) AS lo, max(last_at) AS hi
              FROM d WHERE term IS NULL) s
        WHERE c.id AND (s.n <> 0 OR s.l <> 0 OR s.hi IS NOT NULL)
    )
    SELECT min(gone_first), max(gone_last) INTO lo, hi FROM d WHERE term IS NULL;
    -- A removal always changes the counts or the newest time, so u has
    -- updated the corpus row: this transaction holds its lock until commit.
    IF hi IS NOT NULL THEN
        UPDATE search_corpus c
        SET first_at = (SELECT min(latest_evidence_at) FROM events),
            last_at = (SELECT max(latest_evidence_at) FROM events)
        WHERE c.id AND (c.last_at <= hi OR c.first_at >= lo);
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION search_stats_update() RETURNS trigger LANGUAGE plpgsql AS $$
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
    INSERT INTO search_stats_pending (xact, lexemes, first_at, last_at, gone_first, gone_last)
    SELECT pg_current_xact_id(), coalesce(sum(length(n.search)) - sum(length(o.search)), 0),
        min(n.latest_evidence_at), max(n.latest_evidence_at),
        min(o.latest_evidence_at) FILTER (WHERE o.latest_evidence_at <> n.latest_evidence_at),
        max(o.latest_evidence_at) FILTER (WHERE o.latest_evidence_at <> n.latest_evidence_at)
    FROM search_old o JOIN search_new n ON n.id = o.id
    WHERE o.search IS DISTINCT FROM n.search OR o.latest_evidence_at IS DISTINCT FROM n.latest_evidence_at
    HAVING count(*) > 0;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION search_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_stats_pending (xact, term, delta)
    SELECT pg_current_xact_id(), x, -count(*) FROM search_old o, unnest(tsvector_to_array(o.search)) AS x GROUP BY x;
    INSERT INTO search_stats_pending (xact, docs, lexemes, gone_first, gone_last)
    SELECT pg_current_xact_id(), -count(*), -coalesce(sum(length(search)), 0), min(latest_evidence_at), max(latest_evidence_at)
    FROM search_old HAVING count(*) > 0;
    RETURN NULL;
END $$;

-- The span as the events hold it now.
UPDATE search_corpus c
SET first_at = (SELECT min(latest_evidence_at) FROM events),
    last_at = (SELECT max(latest_evidence_at) FROM events)
WHERE c.id;
