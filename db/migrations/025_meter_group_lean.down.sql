-- The previous release reads a key's last use from rate_windows alone: the
-- last windows only usage_daily recorded are kept there as rows of no
-- requests (no count changes).
INSERT INTO rate_windows (api_key_id, window_start, requests)
SELECT api_key_id, max(last_window), 0 FROM usage_daily WHERE last_window IS NOT NULL GROUP BY api_key_id
ON CONFLICT (api_key_id, window_start) DO NOTHING;
DROP FUNCTION meter_group_lean(bytea[], timestamptz[], int[], bigint[], date[], date[], text[], text[], bool[], text[], text);
ALTER TABLE usage_daily DROP COLUMN last_window;
