DROP INDEX IF EXISTS events_category_subcategory_idx;
CREATE INDEX IF NOT EXISTS relationships_target_idx ON relationships (target_entity_id, source_entity_id);
DROP INDEX IF EXISTS relationships_target_type_idx;
DROP INDEX IF EXISTS relationships_source_type_idx;
