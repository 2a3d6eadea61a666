package db

import "context"

// NameIndexAnswers reports whether d's name index, read at content version
// version or later, answers name (cleaned) without ResolveSQL.
func (d *DB) NameIndexAnswers(ctx context.Context, version int64, name string) (bool, error) {
	_, ok, err := d.indexedCandidates(ctx, d.Reader(), version, cleanName(name))
	return ok, err
}

// SetNameIndexMax bounds the names d's name index holds (0: the default).
func (d *DB) SetNameIndexMax(max int) { d.names.max = max }
