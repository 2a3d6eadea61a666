-- Access: plans as data, accounts, hashed API keys, and metering counters.
CREATE TABLE plans (
    name            text PRIMARY KEY,
    -- rank orders plans from lowest to highest; "the plan needed" for a
    -- route is the lowest-ranked plan that grants it.
    rank            int     NOT NULL UNIQUE,
    layers          text[]  NOT NULL,
    briefs          boolean NOT NULL,
    batch_briefs    boolean NOT NULL,
    webhooks        boolean NOT NULL,
    premium_feeds   boolean NOT NULL,
    export          boolean NOT NULL,
    monthly_credits bigint  NOT NULL
);
INSERT INTO plans (name, rank, layers, briefs, batch_briefs, webhooks, premium_feeds, export, monthly_credits) VALUES
    ('free',       0, '{evaluation}',                     false, false, false, false, false,     1000),
    ('pro',        1, '{evaluation,operational}',         true,  false, true,  false, false,    50000),
    ('business',   2, '{evaluation,operational,premium}', true,  true,  true,  true,  false,   500000),
    ('enterprise', 3, '{evaluation,operational,premium}', true,  true,  true,  true,  true,  10000000);

CREATE TABLE accounts (
    id         bigserial PRIMARY KEY,
    name       text NOT NULL UNIQUE,
    plan       text NOT NULL REFERENCES plans (name),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- API keys are stored as a SHA-256 hash; prefix is a short visible part of
-- the key for support conversations. The plaintext is shown once at creation.
CREATE TABLE api_keys (
    id         bigserial PRIMARY KEY,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    prefix     text   NOT NULL,
    hash       bytea  NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id, id);

-- rate_windows counts requests per key per fixed 60-second window. One
-- atomic upsert per request keeps the limit exact across server processes.
CREATE TABLE rate_windows (
    api_key_id   bigint      NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    window_start timestamptz NOT NULL,
    requests     int         NOT NULL DEFAULT 0,
    PRIMARY KEY (api_key_id, window_start)
);

-- usage_daily meters requests and credits per key per UTC day; week and
-- month totals are sums over it.
CREATE TABLE usage_daily (
    api_key_id bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    day        date   NOT NULL,
    requests   bigint NOT NULL DEFAULT 0,
    credits    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (api_key_id, day)
);

-- usage_monthly keeps the month's credit total per key so the monthly
-- allowance is checked and charged in the same statement.
CREATE TABLE usage_monthly (
    api_key_id bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    month      date   NOT NULL,
    requests   bigint NOT NULL DEFAULT 0,
    credits    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (api_key_id, month)
);
