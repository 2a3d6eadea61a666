DROP INDEX IF EXISTS event_entities_entity_significance_idx;
DROP INDEX IF EXISTS events_category_significance_idx;
