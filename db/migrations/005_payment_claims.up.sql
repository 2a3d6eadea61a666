-- The replay record of pay-per-request: one row per signed payment (an
-- EIP-3009 transfer authorization, whether it came as x402 or MPP) that a
-- request has presented, keyed by what the token contract itself keys a
-- used authorization by: chain, token, payer and nonce. A payment is
-- claimed before it is verified, released when the request ends without
-- settling it (so the client may retry it), and kept as settled once the
-- facilitator settled it. Every replica refuses a payment another has
-- claimed. Rows are kept until the authorization expires on chain, after
-- which no one could settle it anyway, and are deleted by later claims.
CREATE TABLE payment_claims (
    key        text        PRIMARY KEY,
    protocol   text        NOT NULL CHECK (protocol IN ('x402', 'mpp')),
    state      text        NOT NULL CHECK (state IN ('pending', 'settled')),
    reference  text,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX payment_claims_expires_at ON payment_claims (expires_at);
