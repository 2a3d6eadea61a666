DROP TABLE IF EXISTS api_key_audit;
ALTER TABLE api_keys DROP COLUMN IF EXISTS replaced_by;
ALTER TABLE api_keys DROP COLUMN IF EXISTS expires_at;
