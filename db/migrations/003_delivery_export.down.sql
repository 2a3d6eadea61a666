DROP TABLE IF EXISTS export_jobs, poller_state, webhook_attempts, webhook_deliveries, webhooks CASCADE;
