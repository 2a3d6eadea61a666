-- Ingest computes its links' signatures in its own upsert, for the whole
-- batch in one statement (ingest.eventEntityUpsert); the trigger of
-- migration 031, a function call and two statements per row, cost ingest
-- 6–17% of its events a second. It now runs for a link inserted without a
-- signature (any other writer, and a link of an event of no words, whose
-- signature is NULL and stays so), and for every change of a link's event.
DROP TRIGGER event_entities_signature_trg ON event_entities;
CREATE TRIGGER event_entities_signature_ins_trg BEFORE INSERT ON event_entities
    FOR EACH ROW WHEN (NEW.sig_a IS NULL) EXECUTE FUNCTION event_entities_signature();
CREATE TRIGGER event_entities_signature_upd_trg BEFORE UPDATE OF event_id ON event_entities
    FOR EACH ROW EXECUTE FUNCTION event_entities_signature();
