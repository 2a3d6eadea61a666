-- The counter rows metering raises on every request (the account's window,
-- the account's month, the key's day) are each updated many times in a row.
-- An update is HOT (a new version on the row's own page, no new index entry)
-- only when that page has room for it, and a page's old versions can be
-- pruned only once no snapshot sees them: a streaming replica with
-- hot_standby_feedback (or any long transaction) holds them for seconds at
-- a time. Packed full, as they were, pages had no room: at a million events
-- with a replica attached, 4–17% of the metering updates were HOT; each of
-- the others inserted a primary-key entry and left the index to skip dead
-- entries on the next probe. With nine tenths of each page left free for
-- later versions, about ten versions of each of a page's rows fit before
-- pruning is needed: 97–100% HOT in the same runs, and 0.04–0.1 ms less
-- PostgreSQL CPU per request (tests/bench/NOTES.md).
--
-- The setting applies to pages written from now on; rows already stored
-- keep their pages until rewritten. account_rate_windows is pruned of old
-- windows (jobs/meter_prune.go), so it stays a few pages an account; the
-- month and day rows are one an account a month and one a key a day.
ALTER TABLE account_rate_windows SET (fillfactor = 10);
ALTER TABLE account_usage_monthly SET (fillfactor = 10);
ALTER TABLE usage_daily SET (fillfactor = 10);
