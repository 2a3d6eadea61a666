package db

import "strings"

// StatementForTest is a statement with its arguments, to EXPLAIN as it is
// run.
type StatementForTest struct {
	SQL  string
	Args []any
}

// ListEventsStatementForTest is ListEvents' statement for f with its
// arguments.
func ListEventsStatementForTest(f EventFilter) (StatementForTest, error) {
	if f.EntityID != 0 && strings.TrimSpace(f.Topic) == "" {
		return EntityEventsStatementForTest([]int64{f.EntityID}, f.entityFilter()), nil
	}
	sql, a, err := listEventsStatement(f)
	return StatementForTest{SQL: sql, Args: a}, err
}

// EntityEventsStatementForTest is EventsByEntityIDs' statement for ids and
// f with its arguments.
func EntityEventsStatementForTest(ids []int64, f EntityEventFilter) StatementForTest {
	sql, a := entityEventsStatement(ids, f, EventChildren{})
	return StatementForTest{SQL: sql, Args: a}
}
