package db

import (
	"github.com/uptrace/bun/dialect/pgdialect"
)

// pgArray wraps ids so Bun sends them as one PostgreSQL array parameter.
func pgArray(ids []int64) any { return pgdialect.Array(ids) }
