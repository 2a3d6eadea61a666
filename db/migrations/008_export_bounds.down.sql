DROP INDEX IF EXISTS export_jobs_active_idx;
