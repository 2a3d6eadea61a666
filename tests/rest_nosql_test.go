package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// restHandlersOwnedElsewhere are the rest/ files whose handlers manage
// account-owned resources through db stores; they are not graph routes.
var restHandlersOwnedElsewhere = map[string]bool{
	"webhook.go": true,
	"export.go":  true,
	"admin.go":   true,
	"keys.go":    true,
}

// sqlPatterns find SQL text and database access in Go source.
var sqlPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bSELECT\b[\s\S]{0,200}?\bFROM\b`),
	regexp.MustCompile(`(?i)\bINSERT\s+INTO\b`),
	regexp.MustCompile(`(?i)\bUPDATE\s+\w+\s+SET\b`),
	regexp.MustCompile(`(?i)\bDELETE\s+FROM\b`),
	regexp.MustCompile(`(?i)\bWITH\s+\w+\s+AS\s*\(`),
	regexp.MustCompile(`"github\.com/uptrace/bun[/"]`),
	regexp.MustCompile(`"github\.com/jackc/pgx`),
	regexp.MustCompile(`"database/sql"`),
	regexp.MustCompile(`\.(NewSelect|NewInsert|NewUpdate|NewDelete|NewRaw|QueryRow|QueryContext|ExecContext)\(`),
}

// findSQL returns the patterns that match src.
func findSQL(src string) []string {
	var hits []string
	for _, re := range sqlPatterns {
		if m := re.FindString(src); m != "" {
			hits = append(hits, m)
		}
	}
	return hits
}

// TestRESTHandlersContainNoSQL proves the /v1 graph routes are thin
// translations: no file of rest/ (other than the account-resource handlers
// owned elsewhere) contains SQL or touches the database; every route runs
// its embedded GraphQL operation.
func TestRESTHandlersContainNoSQL(t *testing.T) {
	t.Parallel()
	// The detector detects.
	require.NotEmpty(t, findSQL("q := `SELECT id\n  FROM events`"))
	require.NotEmpty(t, findSQL(`store.Bun.NewSelect().Model(&e)`))
	require.NotEmpty(t, findSQL(`import "github.com/uptrace/bun"`))
	require.Empty(t, findSQL(`// Operation selects fields from the schema; DELETE is a method.`))

	files, err := filepath.Glob(filepath.Join("..", "rest", "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	checked := 0
	for _, f := range files {
		base := filepath.Base(f)
		if restHandlersOwnedElsewhere[base] || strings.HasSuffix(base, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		require.Empty(t, findSQL(string(src)), "%s contains SQL or database access", f)
		checked++
	}
	require.GreaterOrEqual(t, checked, 8)

	ops, err := filepath.Glob(filepath.Join("..", "rest", "ops", "*.graphql"))
	require.NoError(t, err)
	require.NotEmpty(t, ops, "routes run embedded GraphQL operations")
}
