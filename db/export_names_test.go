package db

import "context"

// NameIndexAnswers reports whether d's name index, read at content version
// version or later, answers name (cleaned) without ResolveSQL.
func (d *DB) NameIndexAnswers(ctx context.Context, version int64, name string) (bool, error) {
	_, ok, err := d.indexedPage(ctx, d.Reader(), version, cleanName(name), 1, 0)
	return ok, err
}

// SetNameIndexMax bounds the names d's name index holds (0: the default).
func (d *DB) SetNameIndexMax(max int) { d.names.max = max }

// MatchNamesForTest is the name index's match of each of names (cleaned),
// the index read at content version version or later: the part of a
// lookup that runs in memory. It reports how many names the index
// answered.
func (d *DB) MatchNamesForTest(ctx context.Context, version int64, names []string) (int, error) {
	idx, err := d.nameIndex(ctx, d.Reader(), version)
	if err != nil || idx == nil {
		return 0, err
	}
	answered := 0
	for _, n := range names {
		if _, ok := idx.Match(cleanName(n)); ok {
			answered++
		}
	}
	return answered, nil
}
