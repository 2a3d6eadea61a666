-- The significance feeds (/v1/latest's default order, /v1/signal/top, the
-- events query) read an index in their whole order: significance, then
-- time, then id. events_significance_idx kept (significance, id) with the
-- time as an included column, so a page read every event of the top
-- significance values in the window and sorted them by time: the work grew
-- with the data (1,048 rows for 25 at a million events, 10,400 at ten
-- million), and the generic plan of a window of unknown width chose a
-- sequential scan at ten million events (1.8 s). In this order the window
-- is a condition on the index's second column, and the newest events of the
-- top value come first: a page reads its rows and a few more.
CREATE INDEX IF NOT EXISTS events_significance_recency_idx ON events (significance DESC NULLS LAST, latest_evidence_at DESC, id DESC);
DROP INDEX IF EXISTS events_significance_idx;
