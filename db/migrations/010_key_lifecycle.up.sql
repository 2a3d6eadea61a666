-- Key lifecycle: optional expiry, rotation links and an audit trail.
--
-- expires_at, when set, is the instant from which the key is refused
-- ("API key has expired."); a rotation with a grace period sets it on the
-- key it replaces. replaced_by points from a rotated key to its successor.
-- No process caches a key: every request reads its row in the metering
-- statement on the primary, so a change applies to the next request on
-- every replica.
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;
ALTER TABLE api_keys ADD COLUMN replaced_by bigint REFERENCES api_keys (id) ON DELETE SET NULL;

-- api_key_audit records every change to an account's keys or plan: who
-- (actor: "cli", or "api_key:<id>" for a change made through /v1/keys),
-- what (action) and the details (the plan before and after, the key a
-- rotation created, the reason given for a revocation…). Rows outlive the
-- keys they name (api_key_id is kept as a plain number).
CREATE TABLE api_key_audit (
    id         bigserial   PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT now(),
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    api_key_id bigint,
    action     text        NOT NULL,
    actor      text        NOT NULL,
    detail     jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX api_key_audit_account_idx ON api_key_audit (account_id, id);
