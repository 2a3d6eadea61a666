ALTER TABLE export_jobs DROP COLUMN bytes_written;
