DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['entities', 'entity_names', 'relationships', 'entity_references',
            'events', 'event_entities', 'evidence', 'markets', 'market_subevents', 'market_posts'] LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', t || '_data_version_trg', t);
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', t || '_data_version_truncate_trg', t);
    END LOOP;
END $$;
DROP TABLE IF EXISTS data_version_pending;
DROP FUNCTION IF EXISTS bump_data_version();
DROP FUNCTION IF EXISTS note_data_change();
DROP TABLE IF EXISTS data_version;
