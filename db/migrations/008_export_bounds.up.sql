-- Per-account export bounds: creating an export job counts the account's
-- jobs that are requested or running (at most EXPORT_MAX_ACTIVE_JOBS) and
-- the bytes its jobs created today wrote (export_jobs_account_idx). The
-- partial index keeps the first count to the account's active jobs,
-- however many it ever had.
CREATE INDEX export_jobs_active_idx ON export_jobs (account_id) WHERE status IN ('requested', 'running');
