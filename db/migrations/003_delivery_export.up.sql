-- Webhooks, their deliveries and attempts; the poller's high-water mark;
-- export jobs.
CREATE TABLE webhooks (
    id                   bigserial PRIMARY KEY,
    account_id           bigint  NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    url                  text    NOT NULL,
    secret               text    NOT NULL,
    event_types          text[]  NOT NULL,
    active               boolean NOT NULL DEFAULT true,
    consecutive_failures int     NOT NULL DEFAULT 0,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_account_idx ON webhooks (account_id, created_at DESC, id DESC);
CREATE INDEX webhooks_active_idx ON webhooks (id) WHERE active;

CREATE TABLE webhook_deliveries (
    id            uuid    PRIMARY KEY,
    webhook_id    bigint  NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id      bigint,
    event_type    text    NOT NULL,
    status        text    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts      int     NOT NULL DEFAULT 0,
    last_status   int,
    last_error    text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    delivered_at  timestamptz
);
-- One delivery per (webhook, event): fan-out is idempotent.
CREATE UNIQUE INDEX webhook_deliveries_webhook_event_idx ON webhook_deliveries (webhook_id, event_id) WHERE event_id IS NOT NULL;
CREATE INDEX webhook_deliveries_webhook_recent_idx ON webhook_deliveries (webhook_id, created_at DESC);

CREATE TABLE webhook_attempts (
    id           bigserial PRIMARY KEY,
    delivery_id  uuid   NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt      int    NOT NULL,
    attempted_at timestamptz NOT NULL DEFAULT now(),
    status_code  int,
    latency_ms   int    NOT NULL DEFAULT 0,
    error        text
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempt);

-- poller_state holds the durable high-water mark of the event poller.
CREATE TABLE poller_state (
    name      text PRIMARY KEY,
    last_seq  bigint NOT NULL DEFAULT 0,
    polled_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO poller_state (name) VALUES ('events');

CREATE TABLE export_jobs (
    id               uuid   PRIMARY KEY,
    account_id       bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    api_key_id       bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    scope            text   NOT NULL,
    format           text   NOT NULL,
    status           text   NOT NULL DEFAULT 'requested' CHECK (status IN ('requested', 'running', 'completed', 'failed', 'expired')),
    requested_params jsonb  NOT NULL,
    note             text   NOT NULL DEFAULT '',
    storage_key      text,
    row_count        bigint,
    byte_size        bigint,
    sha256           text,
    error            text,
    expires_at       timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX export_jobs_account_idx ON export_jobs (account_id, created_at DESC, id);
