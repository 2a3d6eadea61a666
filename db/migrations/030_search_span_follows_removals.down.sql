-- The fold, update and delete triggers as migration 009 wrote them: the
-- corpus's span only widens again.
CREATE OR REPLACE FUNCTION search_stats_fold() RETURNS trigger LANGUAGE plpgsql AS $$
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
    INSERT INTO search_stats_pending (xact, lexemes, last_at)
    SELECT pg_current_xact_id(), coalesce(sum(length(n.search)) - sum(length(o.search)), 0), max(n.latest_evidence_at)
    FROM search_old o JOIN search_new n ON n.id = o.id
    WHERE o.search IS DISTINCT FROM n.search OR o.latest_evidence_at IS DISTINCT FROM n.latest_evidence_at
    HAVING count(*) > 0;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION search_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_stats_pending (xact, term, delta)
    SELECT pg_current_xact_id(), x, -count(*) FROM search_old o, unnest(tsvector_to_array(o.search)) AS x GROUP BY x;
    INSERT INTO search_stats_pending (xact, docs, lexemes)
    SELECT pg_current_xact_id(), -count(*), -coalesce(sum(length(search)), 0) FROM search_old HAVING count(*) > 0;
    RETURN NULL;
END $$;

ALTER TABLE search_stats_pending DROP COLUMN gone_first, DROP COLUMN gone_last;
