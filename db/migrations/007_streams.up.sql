-- Live streams (GraphQL subscriptions and GET /v1/stream).
--
-- max_streams is how many streams one API key may hold open at a time; 0
-- means the plan does not include streams. The cap holds across every
-- server process: each open stream holds one lease row, taken under a
-- per-key advisory lock that counts the key's live leases first. A process
-- renews the leases of its open streams while they run and deletes each
-- when its stream ends, so the lease of a process that died expires on its
-- own and frees its place.
ALTER TABLE plans ADD COLUMN max_streams int NOT NULL DEFAULT 0;
UPDATE plans SET max_streams = CASE name
    WHEN 'pro' THEN 5
    WHEN 'business' THEN 25
    WHEN 'enterprise' THEN 100
    ELSE 0 END;

CREATE TABLE stream_leases (
    id         uuid        PRIMARY KEY,
    api_key_id bigint      NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    opened_at  timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX stream_leases_key_idx ON stream_leases (api_key_id, expires_at);
