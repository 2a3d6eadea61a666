-- Relationship filters and the categories listing.
--
-- Each direction of an entity's relationships is read from an index that
-- leads with its end and the type, in the order the API pages them
-- (relationship type, then the other end): a type filter is an index range.
-- The target-side index replaces relationships_target_idx, its prefix.
CREATE INDEX relationships_source_type_idx ON relationships (source_entity_id, relationship_type, target_entity_id);
CREATE INDEX relationships_target_type_idx ON relationships (target_entity_id, relationship_type, source_entity_id);
DROP INDEX IF EXISTS relationships_target_idx;

-- The (category, subcategory) pairs in use, listed by a loose index scan
-- (one probe per pair) for GET /v1/categories/all and the categories query.
CREATE INDEX events_category_subcategory_idx ON events (category, subcategory);
