DROP TABLE IF EXISTS market_posts, market_subevents, markets, evidence, event_entities, events, entity_references, relationships, entity_names, entities CASCADE;
DROP SEQUENCE IF EXISTS events_ingest_seq;
DROP FUNCTION IF EXISTS events_search_update();
DROP FUNCTION IF EXISTS norm_text(text);
