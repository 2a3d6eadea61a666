ALTER TABLE usage_daily RESET (fillfactor);
ALTER TABLE account_usage_monthly RESET (fillfactor);
ALTER TABLE account_rate_windows RESET (fillfactor);
