package db

// MeterGroupStatementForTest is the metering statement and its arguments
// for a group of requests ps, as meterGroup sends them.
func MeterGroupStatementForTest(ps []MeterParams) (string, []any) {
	group := make([]*meterCall, len(ps))
	for i, p := range ps {
		group[i] = &meterCall{p: p}
	}
	return meterGroupSQL, meterGroupArgs(group)
}
