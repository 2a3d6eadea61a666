DROP TABLE IF EXISTS payment_claims;
