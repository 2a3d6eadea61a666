-- OAuth 2.1 for /mcp: the authorization server's state, all in
-- PostgreSQL so that any replica answers any step of a flow and a
-- revocation applies to the next request everywhere.
--
-- oauth_clients holds dynamically registered clients (RFC 7591) and the
-- cached Client ID Metadata Documents of URL client ids. A registered
-- client that no grant ever used expires (expires_at); a metadata
-- document is fetched again once fetched_at is older than the cache time.
CREATE TABLE oauth_clients (
    client_id   text        PRIMARY KEY,
    kind        text        NOT NULL CHECK (kind IN ('registered', 'metadata_document')),
    metadata    jsonb       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    fetched_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz,
    registered_from text
);
CREATE INDEX oauth_clients_expiry_idx ON oauth_clients (expires_at) WHERE expires_at IS NOT NULL;

-- oauth_requests: an authorization request shown on the consent page,
-- waiting for the person's answer (csrf_hash binds the form to the
-- browser's cookie). Short-lived.
CREATE TABLE oauth_requests (
    id             text        PRIMARY KEY,
    csrf_hash      bytea       NOT NULL,
    client_id      text        NOT NULL,
    redirect_uri   text        NOT NULL,
    scope          text        NOT NULL,
    state          text,
    code_challenge text        NOT NULL,
    resource       text        NOT NULL,
    expires_at     timestamptz NOT NULL
);

-- oauth_grants: one client connected to one key of an account with a
-- scope, for a resource. A grant dies with its key: tokens are honoured
-- only while the key is usable (not revoked, not rotated, not expired).
CREATE TABLE oauth_grants (
    id          bigserial   PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    api_key_id  bigint      NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    client_id   text        NOT NULL,
    client_name text        NOT NULL,
    scope       text        NOT NULL,
    resource    text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at  timestamptz,
    revoked_reason text
);
CREATE INDEX oauth_grants_account_idx ON oauth_grants (account_id) WHERE revoked_at IS NULL;
CREATE INDEX oauth_grants_key_idx ON oauth_grants (api_key_id);

-- oauth_codes: authorization codes (hashed), single use, minutes long.
CREATE TABLE oauth_codes (
    code_hash      bytea       PRIMARY KEY,
    grant_id       bigint      NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    client_id      text        NOT NULL,
    redirect_uri   text        NOT NULL,
    code_challenge text        NOT NULL,
    resource       text        NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz
);

-- oauth_tokens: access and refresh tokens (hashed). A refresh token is
-- spent when used (spent_at): presenting it again revokes its grant.
CREATE TABLE oauth_tokens (
    token_hash bytea       PRIMARY KEY,
    grant_id   bigint      NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    kind       text        NOT NULL CHECK (kind IN ('access', 'refresh')),
    expires_at timestamptz NOT NULL,
    spent_at   timestamptz
);
CREATE INDEX oauth_tokens_grant_idx ON oauth_tokens (grant_id);
