package dbtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel/db"
)

// NameVariants are the names a name-resolution test looks up, given the
// stored names values: each value, its first and last 3, 4 and 6
// characters, its words, two misspellings (a letter dropped, two swapped),
// and names with LIKE's and the regex's metacharacters, an accented name
// and one that matches nothing.
func NameVariants(values []string) map[string]bool {
	names := map[string]bool{}
	for _, n := range []string{"100% yield", "a_b token", `back\slash`, "(x) labs", "s&p 500", "eth.", "labs", "uniswap labs", "ÉTHEREUM", "dao dao", "zzzzqqq"} {
		names[n] = true
	}
	for _, v := range values {
		names[v] = true
		r := []rune(v)
		for _, k := range []int{3, 4, 6} {
			if len(r) > k {
				names[string(r[:k])], names[string(r[len(r)-k:])] = true, true
			}
		}
		for _, w := range strings.Fields(v) {
			names[w] = true
		}
		if len(r) > 4 {
			names[string(r[:2])+string(r[3:])] = true
			s := append([]rune(nil), r...)
			s[1], s[2] = s[2], s[1]
			names[string(s)] = true
		}
	}
	return names
}

// NamedStore is a database of the test's own holding the world seed
// writes (the demo world, given by the caller, which dbtest cannot import),
// at a fixed instant, and every stored name's value, in order: the names
// a name-resolution test looks up come from them (NameVariants).
func NamedStore(t testing.TB, seed func(context.Context, *db.DB) error) (*db.DB, []string) {
	t.Helper()
	ctx := context.Background()
	store := New(t)
	store.Now = func() time.Time { return time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC) }
	if err := seed(ctx, store); err != nil {
		t.Fatalf("seeding: %v", err)
	}
	rows, err := store.Pool.Query(ctx, "SELECT value FROM entity_names ORDER BY value")
	if err != nil {
		t.Fatalf("reading the names: %v", err)
	}
	values, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("reading the names: %v", err)
	}
	return store, values
}
