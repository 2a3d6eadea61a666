-- Account-level meters and key scopes.
--
-- Credits, usage and the rate window belong to the account: every key of
-- an account (and every key a rotation or a restricted-key creation hands
-- out) draws on one rate window and one monthly allowance, so no key
-- operation can reset or multiply them. account_rate_windows and
-- account_usage_monthly are those two meters; the metering statement
-- (db/access.go, meterSQL) upserts the account's window row first, so
-- requests of all of an account's keys serialize on it and the limit stays
-- exact across server processes.
--
-- rate_windows and usage_daily stay per key: they are the record of which
-- key made which requests (a key's last use, a per-key breakdown), not a
-- limit.
CREATE TABLE account_rate_windows (
    account_id   bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    window_start timestamptz NOT NULL,
    requests     int         NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, window_start)
);
INSERT INTO account_rate_windows (account_id, window_start, requests)
SELECT ak.account_id, rw.window_start, sum(rw.requests)
FROM rate_windows rw JOIN api_keys ak ON ak.id = rw.api_key_id
GROUP BY ak.account_id, rw.window_start;

CREATE TABLE account_usage_monthly (
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    month      date   NOT NULL,
    requests   bigint NOT NULL DEFAULT 0,
    credits    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, month)
);
INSERT INTO account_usage_monthly (account_id, month, requests, credits)
SELECT ak.account_id, um.month, sum(um.requests), sum(um.credits)
FROM usage_monthly um JOIN api_keys ak ON ak.id = um.api_key_id
GROUP BY ak.account_id, um.month;
DROP TABLE usage_monthly;

-- scopes: what a key may do. "data" reads the API (every surface the
-- account's plan grants); "management" manages the account's keys (list,
-- create restricted keys, rotate and revoke any key of the account). A key
-- without "management" may still rotate or revoke itself. Keys made before
-- scopes existed could manage keys: they keep both.
--
-- surfaces, when set, restricts a key to those API surfaces (X-Api-Surface
-- values) and to reading: a restricted key. NULL is every surface.
ALTER TABLE api_keys ADD COLUMN scopes text[] NOT NULL DEFAULT '{data,management}';
ALTER TABLE api_keys ALTER COLUMN scopes SET DEFAULT '{data}';
ALTER TABLE api_keys ADD COLUMN surfaces text[];
-- Active keys per account are counted under the account's row lock when a
-- key is added; this index serves the count.
CREATE INDEX api_keys_account_active_idx ON api_keys (account_id) WHERE revoked_at IS NULL;
