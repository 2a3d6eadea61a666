DROP TRIGGER event_entities_signature_upd_trg ON event_entities;
DROP TRIGGER event_entities_signature_ins_trg ON event_entities;
CREATE TRIGGER event_entities_signature_trg BEFORE INSERT OR UPDATE OF event_id ON event_entities
    FOR EACH ROW EXECUTE FUNCTION event_entities_signature();
