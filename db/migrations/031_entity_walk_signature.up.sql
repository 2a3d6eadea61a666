-- A search filtered by an entity walks the entity's newest events
-- (search.walkSQL) and tests each probe on the event's search vector, which
-- costs a lookup of the event by id (four buffers) for every event walked.
-- When the probes' words are rare among the entity's events the walk reads
-- its whole bound (1,000 events): 4,000 buffers, most of the statement
-- (tests/bench/NOTES.md, "exchange hacked" of Binance at twice the plain
-- search).
--
-- Each link now carries a signature of its event's words: two 64-bit
-- words, each lexeme setting one bit in each (the low six bits of the
-- lexeme's hashtext, and the six above them: a Bloom filter of two
-- hashes). The entity's recency index includes it, so the walk tests a
-- probe's words against the signature from the index alone and looks up
-- only the events that may match: a lexeme the event holds always has its
-- bits set, so no match is lost. The service computes a query's bits with
-- the same function (search/hashtext.go; TestSearchFilterWalkReadsSignatures
-- compares them with PostgreSQL's). hashtext is the hash of hash indexes
-- and hash partitions, which pg_upgrade carries over as they are, so it
-- does not change between versions; MD5 would cost five times as much a
-- link written.
--
-- The links' signatures follow their event: a link takes its event's
-- signature when written, and an event whose words change rewrites its
-- links'. A link without one (NULL: an event of no words) is walked as
-- before.
CREATE FUNCTION search_signature(v tsvector, OUT a bigint, OUT b bigint)
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT bit_or(1::bigint << (h & 63)), bit_or(1::bigint << (h >> 6 & 63))
          FROM (SELECT hashtext(l) AS h FROM unnest(tsvector_to_array(v)) AS l) s $$;

ALTER TABLE event_entities ADD COLUMN sig_a bigint, ADD COLUMN sig_b bigint;

-- Every link is written once (under two minutes at a million events on
-- the benchmark machine): reads go on meanwhile; writes of event_entities wait
-- for the new index. The index replaces the old one at the end, so the
-- entity feeds read the old one until then. The rewrite leaves a dead
-- version of each link for a vacuum to reclaim, and the new index the size
-- of both until it is built again (docs/operations/backups-and-upgrades.md).
UPDATE event_entities ee SET sig_a = s.a, sig_b = s.b
FROM events e CROSS JOIN LATERAL search_signature(e.search) s
WHERE e.id = ee.event_id;
CREATE INDEX event_entities_entity_recency_sig_idx
    ON event_entities (entity_id, latest_evidence_at DESC, event_id DESC) INCLUDE (sig_a, sig_b);
DROP INDEX event_entities_entity_recency_idx;
ALTER INDEX event_entities_entity_recency_sig_idx RENAME TO event_entities_entity_recency_idx;

-- The triggers compute the signature in their own statement, not by
-- calling search_signature: a SQL function called from a trigger's
-- statement is planned again on every call, which cost more than the
-- signature itself.
--
-- A link reads its event's words under a share lock: a transaction that
-- has changed them and not committed holds the link back until it does,
-- and the link then reads them as committed; one that changes them later
-- waits for the link's transaction, and its own trigger then rewrites the
-- link with the rest. Without it a link written beside a change of its
-- event's words kept the old ones' signature.
CREATE FUNCTION event_entities_signature() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v tsvector;
BEGIN
    SELECT e.search INTO v FROM events e WHERE e.id = NEW.event_id FOR SHARE;
    SELECT bit_or(1::bigint << (h & 63)), bit_or(1::bigint << (h >> 6 & 63))
    INTO NEW.sig_a, NEW.sig_b
    FROM (SELECT hashtext(l) AS h FROM unnest(tsvector_to_array(v)) AS l) s;
    RETURN NEW;
END $$;
CREATE TRIGGER event_entities_signature_trg BEFORE INSERT OR UPDATE OF event_id ON event_entities
    FOR EACH ROW EXECUTE FUNCTION event_entities_signature();

CREATE FUNCTION events_signature_follows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE event_entities ee SET sig_a = s.a, sig_b = s.b
    FROM (SELECT bit_or(1::bigint << (x.h & 63)) AS a, bit_or(1::bigint << (x.h >> 6 & 63)) AS b
          FROM (SELECT hashtext(l) AS h FROM unnest(tsvector_to_array(NEW.search)) AS l) x) s
    WHERE ee.event_id = NEW.id AND (ee.sig_a, ee.sig_b) IS DISTINCT FROM (s.a, s.b);
    RETURN NULL;
END $$;
CREATE TRIGGER events_signature_follows_trg AFTER UPDATE OF title, summary, bullets, evidence_text, search ON events
    FOR EACH ROW WHEN (OLD.search IS DISTINCT FROM NEW.search) EXECUTE FUNCTION events_signature_follows();
