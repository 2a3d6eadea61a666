-- The content version: one counter that every transaction writing the
-- content tables (entities, relationships, events, evidence, markets…)
-- bumps as it commits, so the new value becomes visible together with the
-- data it announces. The metering statement reads it on every keyed
-- request, and the /v1 response cache keys on it: content committed before
-- a request is metered can never be served from a cache entry built before
-- that content, on any server process.
--
-- The bump happens at commit, not at the write: a statement-level trigger
-- on each content table records the writing transaction once in
-- data_version_pending (a COPY of a million rows records it once), and a
-- deferred constraint trigger on that row does the UPDATE when the
-- transaction commits. Concurrent writers therefore only queue on the
-- counter's row lock for the instant of their commits, never for the
-- length of a transaction.
CREATE TABLE data_version (
    id      boolean PRIMARY KEY DEFAULT true CHECK (id),
    version bigint  NOT NULL
);
INSERT INTO data_version (id, version) VALUES (true, 1);

-- One row per open transaction that wrote content; deleted by its own
-- commit-time bump, so the table is empty outside transactions.
CREATE TABLE data_version_pending (
    xact xid8 PRIMARY KEY
);

CREATE FUNCTION note_data_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO data_version_pending (xact) VALUES (pg_current_xact_id())
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

CREATE FUNCTION bump_data_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM data_version_pending WHERE xact = NEW.xact;
    UPDATE data_version SET version = version + 1 WHERE id;
    RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER data_version_pending_bump_trg
    AFTER INSERT ON data_version_pending
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION bump_data_version();

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['entities', 'entity_names', 'relationships', 'entity_references',
            'events', 'event_entities', 'evidence', 'markets', 'market_subevents', 'market_posts'] LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I
            FOR EACH STATEMENT EXECUTE FUNCTION note_data_change()', t || '_data_version_trg', t);
        EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I
            FOR EACH STATEMENT EXECUTE FUNCTION note_data_change()', t || '_data_version_truncate_trg', t);
    END LOOP;
END $$;
