CREATE INDEX IF NOT EXISTS events_significance_idx ON events (significance DESC NULLS LAST, id DESC) INCLUDE (latest_evidence_at);
DROP INDEX IF EXISTS events_significance_recency_idx;
