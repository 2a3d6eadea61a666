DROP TRIGGER events_signature_follows_trg ON events;
DROP FUNCTION events_signature_follows();
DROP TRIGGER event_entities_signature_trg ON event_entities;
DROP FUNCTION event_entities_signature();
DROP INDEX event_entities_entity_recency_idx;
ALTER TABLE event_entities DROP COLUMN sig_a, DROP COLUMN sig_b;
CREATE INDEX event_entities_entity_recency_idx ON event_entities (entity_id, latest_evidence_at DESC, event_id DESC);
DROP FUNCTION search_signature(tsvector);
