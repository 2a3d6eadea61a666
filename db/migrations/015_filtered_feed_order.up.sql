-- The feeds filtered by category or by entity read an index in their order
-- too (migration 014 did it for the unfiltered feed). At a million events
-- /v1/latest?category=…&window=30d sorted the category's 30 days (207 ms)
-- and ?entityId= of the busiest entity fetched each of its events of the
-- window from the heap and sorted them (511 ms); both grow with the data.
--
-- A category's feed in significance order walks its own range of this
-- index, the window an index condition, like the unfiltered feed.
CREATE INDEX IF NOT EXISTS events_category_significance_idx
    ON events (category, significance DESC NULLS LAST, latest_evidence_at DESC, id DESC);
-- An entity's events in significance order (the entity filter of the feeds,
-- Entity.events(sort: SIGNIFICANCE)) walk this index of event_entities,
-- which copies each event's time, significance and category;
-- event_entities_entity_recency_idx serves the recency order.
CREATE INDEX IF NOT EXISTS event_entities_entity_significance_idx
    ON event_entities (entity_id, significance DESC NULLS LAST, latest_evidence_at DESC, event_id DESC);
