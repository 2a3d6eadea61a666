DROP INDEX IF EXISTS api_keys_account_active_idx;
ALTER TABLE api_keys DROP COLUMN IF EXISTS surfaces;
ALTER TABLE api_keys DROP COLUMN IF EXISTS scopes;

-- The account's month goes back to its oldest key.
CREATE TABLE usage_monthly (
    api_key_id bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    month      date   NOT NULL,
    requests   bigint NOT NULL DEFAULT 0,
    credits    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (api_key_id, month)
);
INSERT INTO usage_monthly (api_key_id, month, requests, credits)
SELECT (SELECT min(ak.id) FROM api_keys ak WHERE ak.account_id = m.account_id), m.month, m.requests, m.credits
FROM account_usage_monthly m
WHERE EXISTS (SELECT 1 FROM api_keys ak WHERE ak.account_id = m.account_id);
DROP TABLE IF EXISTS account_usage_monthly;
DROP TABLE IF EXISTS account_rate_windows;
