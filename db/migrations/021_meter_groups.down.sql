DROP FUNCTION meter_group(bytea[], timestamptz[], int[], bigint[], date[], date[], text[], text[], bool[], text[], text);
