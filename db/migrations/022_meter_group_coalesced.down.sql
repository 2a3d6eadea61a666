DROP FUNCTION meter_group_coalesced(bytea[], timestamptz[], int[], bigint[], date[], date[], text[], text[], bool[], text[], text);
DROP TYPE meter_group_request;
