DROP INDEX IF EXISTS events_search_day_idx;
DROP FUNCTION IF EXISTS search_day_lexemes(tsvector, timestamptz);
