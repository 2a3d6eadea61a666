package db_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/demo"
	"github.com/cryptointel/cryptointel/search"
)

// TestNameIndexMatchesTheStatement checks that name resolution answered
// from the name index (db.DB.ResolveEntities and ResolveEntitiesFolded at
// a content version) gives ResolveSQL's answer — the same entities, kinds
// and values of match, ranks, popularity and order, on a first page and a
// later one, with the same entities and references when folded — over the
// demo world's names, their starts, ends, words and misspellings, names
// of one and two characters, and names with LIKE's and the regex's
// metacharacters; that it answers every name made of ASCII characters and
// leaves the others to the statement; and that a lookup costs no
// statement (folded with its entities, one), the index being read again
// only for a lookup metered after a write to the names, which then finds
// the new name.
func TestNameIndexMatchesTheStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, values := dbtest.NamedStore(t, demoWorld(200))
	require.Greater(t, len(values), 1000)
	version := func() int64 {
		var v int64
		require.NoError(t, store.Pool.QueryRow(ctx, "SELECT version FROM data_version").Scan(&v))
		return v
	}
	at := version()

	names := dbtest.NameVariants(values)
	for _, v := range values {
		r := []rune(v)
		names[string(r[:1])] = true
		if len(r) > 1 {
			names[string(r[:2])] = true
		}
	}
	names["Ö"], names["bitcoïn"], names["é labs"] = true, true, true

	format := func(ms []search.EntityMatch) string { return fmt.Sprintf("%+v", ms) }
	ids := func(es []*cryptointel.Entity) []int64 {
		out := make([]int64, len(es))
		for i, e := range es {
			out[i] = e.ID
		}
		slices.Sort(out)
		return out
	}
	refs := func(rs []*cryptointel.Reference) string {
		var s string
		for _, r := range rs {
			s += fmt.Sprintf("%d/%d/%s;", r.EntityID, r.ID, r.URL)
		}
		return s
	}
	answered, ascii, matched := 0, 0, 0
	for name := range names {
		clean := search.CleanName(name)
		if clean == "" {
			continue
		}
		for _, page := range [][2]int{{100, 0}, {3, 2}} {
			want, err := db.ResolveEntities(ctx, store.Reader(), clean, page[0], page[1])
			require.NoError(t, err, name)
			got, err := store.ResolveEntities(ctx, at, clean, page[0], page[1])
			require.NoError(t, err, name)
			require.Equal(t, format(want), format(got), "name %q, page %v", name, page)
			if page[1] == 0 && len(want) > 0 {
				matched++
			}

			wm, we, wr, err := db.ResolveEntitiesFolded(ctx, store.Reader(), clean, page[0], page[1], true)
			require.NoError(t, err, name)
			gm, ge, gr, err := store.ResolveEntitiesFolded(ctx, at, clean, page[0], page[1], true)
			require.NoError(t, err, name)
			require.Equal(t, format(wm), format(gm), "name %q, page %v, folded", name, page)
			require.Equal(t, ids(we), ids(ge), "name %q, page %v, folded entities", name, page)
			require.Equal(t, refs(wr), refs(gr), "name %q, page %v, folded references", name, page)
		}
		ok, err := store.NameIndexAnswers(ctx, at, clean)
		require.NoError(t, err)
		isASCII := utf8.RuneCountInString(clean) == len(clean)
		if isASCII {
			ascii++
		}
		if ok {
			answered++
			require.True(t, isASCII, "the index answered %q", name)
		}
	}
	require.Greater(t, ascii, 3000)
	require.Equal(t, ascii, answered, "every ASCII name is answered by the index")
	require.Greater(t, matched, ascii*8/10)

	// count returns the statements of a lookup of name at v, and of the
	// same lookup folded with its entities and their references.
	count := func(v int64, name string) (int64, int64, []search.EntityMatch) {
		sctx, n := db.WithStatementCounter(ctx)
		ms, err := store.ResolveEntities(sctx, v, name, 10, 0)
		require.NoError(t, err)
		fctx, nf := db.WithStatementCounter(ctx)
		fms, _, _, err := store.ResolveEntitiesFolded(fctx, v, name, 10, 0, true)
		require.NoError(t, err)
		require.Equal(t, format(ms), format(fms), name)
		return n.Load(), nf.Load(), ms
	}
	n, nf, ms := count(at, "Chainlink")
	require.Equal(t, int64(0), n, "a lookup at the index's version: no statement")
	require.Equal(t, int64(1), nf, "folded: the page's entities")
	require.NotEmpty(t, ms)
	n, nf, ms = count(at, "zzzzqqq")
	require.Equal(t, [2]int64{0, 0}, [2]int64{n, nf}, "a name nothing matches: no statement")
	require.Empty(t, ms)

	// A name written after the index was read: a lookup metered after the
	// write reads the names again and finds it; the next one does not read
	// them.
	tx, err := store.Pool.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `INSERT INTO entities (id, canonical_name, display_name) VALUES (990001, 'Zzyzx Finance', 'Zzyzx')`)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `INSERT INTO entity_names (entity_id, kind, value, norm) VALUES
		(990001, 'canonical_name', 'Zzyzx Finance', norm_text('Zzyzx Finance')), (990001, 'display_name', 'Zzyzx', norm_text('Zzyzx'))`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	after := version()
	require.Greater(t, after, at)
	n, nf, ms = count(after, "zzyzx")
	require.Equal(t, [2]int64{1, 1}, [2]int64{n, nf}, "the names read again by the first lookup, then the folded one's page")
	require.Len(t, ms, 1)
	require.Equal(t, [3]string{"Zzyzx", "display_name", "exact"}, [3]string{ms[0].MatchedValue, ms[0].MatchedVia, ms[0].MatchType})
	n, nf, _ = count(after, "zzyzx finance")
	require.Equal(t, [2]int64{0, 1}, [2]int64{n, nf})

	// statementAnswers checks that at content version v the index leaves
	// names to the statement (why says when), with its answers.
	statementAnswers := func(v int64, why string, names ...string) {
		t.Helper()
		ok, err := store.NameIndexAnswers(ctx, v, names[0])
		require.NoError(t, err)
		require.False(t, ok, why)
		for _, name := range names {
			want, err := db.ResolveEntities(ctx, store.Reader(), name, 50, 0)
			require.NoError(t, err)
			got, err := store.ResolveEntities(ctx, v, name, 50, 0)
			require.NoError(t, err)
			require.Equal(t, format(want), format(got), "%s: %s", why, name)
		}
	}

	// A directory of more names than the index holds is resolved by the
	// statement, with the same answers.
	store.SetNameIndexMax(100)
	tx, err = store.Pool.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `UPDATE entities SET display_name = 'Zzyzx Money' WHERE id = 990001`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			_, err = store.Pool.Exec(ctx, "ANALYZE entity_names")
			require.NoError(t, err)
			_, err = store.Pool.Exec(ctx, "UPDATE entities SET display_name = 'Zzyzx' WHERE id = 990001")
			require.NoError(t, err)
		}
		statementAnswers(version(), fmt.Sprintf("analyzed %v", analyzed), "chainlink", "zzyzx", "labs", "op")
	}

	// A database whose folding is not ASCII lower case (as a Turkish
	// locale's lower() would have it) is resolved by the statement.
	store.SetNameIndexMax(0)
	_, err = store.Pool.Exec(ctx, `CREATE OR REPLACE FUNCTION norm_text(t text) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE STRICT
		AS $$ SELECT replace(lower(public.unaccent('public.unaccent'::regdictionary, t)), 'i', 'ı') $$`)
	require.NoError(t, err)
	_, err = store.Pool.Exec(ctx, "UPDATE entities SET display_name = 'Zzyzx Money' WHERE id = 990001")
	require.NoError(t, err)
	statementAnswers(version(), "folded otherwise", "Chainlink", "bitcoin", "Zzyzx")
}

// TestNameIndexFollowsWritesUnderLoad: lookups from several goroutines
// while names are written, each lookup at the content version read just
// before it, find every name committed before that version — the index is
// read again for a newer version, once, however many lookups wait for it.
func TestNameIndexFollowsWritesUnderLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := dbtest.NamedStore(t, demoWorld(20))

	const writes = 20
	// written[i] is closed once name i is committed.
	var written [writes]chan struct{}
	for i := range written {
		written[i] = make(chan struct{})
	}
	done := make(chan error, 1)
	go func() {
		for i := 0; i < writes; i++ {
			id := 880000 + i
			name := fmt.Sprintf("Qwvx Probe %02d", i)
			if _, err := store.Pool.Exec(ctx, `WITH e AS (INSERT INTO entities (id, canonical_name, display_name) VALUES ($1, $2, $2))
				INSERT INTO entity_names (entity_id, kind, value, norm) VALUES ($1, 'canonical_name', $2, norm_text($2))`, id, name); err != nil {
				done <- err
				return
			}
			close(written[i])
			time.Sleep(5 * time.Millisecond)
		}
		done <- nil
	}()
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for k := 0; k < 60; k++ {
				// The names committed before the version is read.
				committed := 0
				for committed < writes {
					select {
					case <-written[committed]:
						committed++
						continue
					default:
					}
					break
				}
				var v int64
				if err := store.Pool.QueryRow(ctx, "SELECT version FROM data_version").Scan(&v); err != nil {
					errs <- err
					return
				}
				ms, err := store.ResolveEntities(ctx, v, "qwvx probe", 50, 0)
				if err != nil {
					errs <- err
					return
				}
				if len(ms) < committed {
					errs <- fmt.Errorf("lookup at version %d found %d names of the %d committed before it", v, len(ms), committed)
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		require.NoError(t, <-errs)
	}
	require.NoError(t, <-done)
}

// demoWorld seeds the demo world of n events.
func demoWorld(n int) func(context.Context, *db.DB) error {
	return func(ctx context.Context, store *db.DB) error {
		_, err := demo.Seed(ctx, store, demo.Options{Events: n})
		return err
	}
}

// BenchmarkNameIndexMatch measures the in-memory part of a name lookup
// (search.NameIndex.Match) over the demo world's names and their variants
// (starts, ends, words, misspellings): an op is a round of every lookup
// (ns/op, B/op, allocs/op), ns/name one lookup's time.
//
//	go test ./db -run '^$' -bench NameIndexMatch -benchmem
func BenchmarkNameIndexMatch(b *testing.B) {
	ctx := context.Background()
	store, values := dbtest.NamedStore(b, demoWorld(200))
	var version int64
	require.NoError(b, store.Pool.QueryRow(ctx, "SELECT version FROM data_version").Scan(&version))
	var names []string
	for n := range dbtest.NameVariants(values) {
		if search.CleanName(n) != "" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	answered, err := store.MatchNamesForTest(ctx, version, names)
	require.NoError(b, err)
	require.Greater(b, answered, len(names)/2)
	b.Logf("%d lookups, %d answered", len(names), answered)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := store.MatchNamesForTest(ctx, version, names); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(names)), "ns/name")
}
