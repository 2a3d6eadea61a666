DROP TABLE IF EXISTS usage_monthly, usage_daily, rate_windows, api_keys, accounts, plans CASCADE;
