-- The bytes every attempt of an export job wrote (or tried to write past
-- the account's daily volume), whatever its outcome: the daily volume
-- counts them, so failing jobs cannot write past it. byte_size stays the
-- size of the published file.
ALTER TABLE export_jobs ADD COLUMN bytes_written bigint NOT NULL DEFAULT 0;
UPDATE export_jobs SET bytes_written = byte_size WHERE byte_size IS NOT NULL;
