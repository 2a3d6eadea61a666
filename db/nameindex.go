package db

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/search"
)

// Name resolution in memory. A DB keeps a search.NameIndex of
// entity_names read at a content version (data_version, which every write
// to entity_names bumps as it commits): a lookup metered at that version
// or an older one finds its matches in the index and sends one statement,
// which ranks them by popularity and reads the page (namePageSQL); the
// first lookup metered at a newer version reads the names again first
// (nameIndexSQL). A name the index cannot answer exactly, and a lookup
// whose version is unknown (0), run ResolveSQL as before. The answers are
// ResolveSQL's, row for row (TestNameIndexMatchesTheStatement).

// nameIndexMaxNames bounds the names a name index holds (about 200 bytes
// and ten trigrams each; the demo world has 1,526): a directory with more
// is resolved by ResolveSQL alone, its index scans then cheaper than
// reading every name again at each content version.
const nameIndexMaxNames = 50_000

// nameIndexSQL reads every name with pg_trgm's trigrams of its normalized
// form and the order of its value in the database's collation, each row
// with the content version of the snapshot read, whether the planner's
// count of names is over $1, the bound (then one row and no names; none
// either, one row, when there are no names), and whether norm_text folds
// ASCII letters to ASCII lower case, as the index assumes (a database
// whose locale folds otherwise keeps the statement; a subquery, so that it
// is computed once and not for each name).
const nameIndexSQL = `SELECT v.version, ` + nameCountSQL + ` > $1::bigint,
	(SELECT norm_text('ABCDEFGHIJKLMNOPQRSTUVWXYZ') = 'abcdefghijklmnopqrstuvwxyz'),
	en.entity_id, en.kind, en.value, en.norm, en.trigrams, en.value_order
	FROM data_version v LEFT JOIN (
		SELECT entity_id, kind, value, norm, show_trgm(norm) AS trigrams, dense_rank() OVER (ORDER BY value)::int AS value_order
		FROM entity_names
		WHERE ` + nameCountSQL + ` <= $1::bigint
	) en ON true`

// nameCountSQL is the planner's count of names.
const nameCountSQL = `(SELECT c.reltuples FROM pg_class c WHERE c.oid = 'entity_names'::regclass)`

// namePageSQL ranks the entities $1 at their match ranks $2 (parallel
// arrays, one entry an entity) as ResolveSQL does — strongest match first,
// then the most events, then id — and returns the page's entities with
// their event counts. Each entity's count is read by its key.
const namePageSQL = `SELECT c.entity_id, e.event_count
	FROM unnest($1::bigint[], $2::int[]) AS c(entity_id, rank)
	CROSS JOIN LATERAL (SELECT e.event_count FROM entities e WHERE e.id = c.entity_id) e
	ORDER BY c.rank, e.event_count DESC, c.entity_id
	LIMIT $3 OFFSET $4`

// nameIndexes keeps a DB's newest name index and serializes its reads.
type nameIndexes struct {
	mu sync.Mutex
	// idx was read at content version version; nil with version > 0 when
	// the names were too many to index, or folded otherwise.
	idx     *search.NameIndex
	version int64
	// max bounds the names indexed; 0 is nameIndexMaxNames.
	max int
	// load is held while the names are read, so that the lookups that
	// find the index too old wait for one read instead of each sending
	// its own.
	load sync.Mutex
}

// current returns the index when it was read at version or later, and
// whether one was read so (nil when the index is not used).
func (n *nameIndexes) current(version int64) (*search.NameIndex, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.idx, n.version > 0 && n.version >= version
}

// nameIndex returns an index of entity_names read at content version
// version or later, reading the names on q when the one kept is older;
// nil when version is unknown, or the names are too many to index or
// folded otherwise than the index assumes.
func (d *DB) nameIndex(ctx context.Context, q Querier, version int64) (*search.NameIndex, error) {
	if version <= 0 {
		return nil, nil
	}
	n := &d.names
	if idx, ok := n.current(version); ok {
		return idx, nil
	}
	n.load.Lock()
	defer n.load.Unlock()
	if idx, ok := n.current(version); ok {
		return idx, nil
	}
	idx, at, err := readNameIndex(ctx, q, cmp.Or(n.max, nameIndexMaxNames))
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	if at > n.version {
		n.idx, n.version = idx, at
	}
	n.mu.Unlock()
	// A replica behind version gives an older index: this lookup reads it
	// as the statement would read that replica, and the next one reads
	// again.
	return idx, nil
}

// readNameIndex reads entity_names into an index, with the content version
// it was read at; the index is nil when the names are more than max, or
// when the database does not fold ASCII as the index does.
func readNameIndex(ctx context.Context, q Querier, max int) (*search.NameIndex, int64, error) {
	rows, err := query(ctx, q, nameIndexSQL, max)
	if err != nil {
		return nil, 0, fmt.Errorf("error reading entity names: %w", err)
	}
	defer rows.Close()
	var (
		version     int64
		many, folds bool
		names       []search.NameRow
	)
	for rows.Next() {
		if len(names) == max {
			many = true
			break
		}
		var (
			id           *int64
			kind, v, nrm *string
			trigrams     []string
			order        *int32
		)
		if err := rows.Scan(&version, &many, &folds, &id, &kind, &v, &nrm, &trigrams, &order); err != nil {
			return nil, 0, fmt.Errorf("error scanning entity names: %w", err)
		}
		if id != nil {
			names = append(names, search.NameRow{EntityID: *id, Kind: *kind, Value: *v, Norm: *nrm, Trigrams: trigrams, ValueOrder: int(*order)})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("error reading entity names: %w", err)
	}
	if many || !folds {
		return nil, version, nil
	}
	return search.BuildNameIndex(names), version, nil
}

// indexedCandidates returns name's candidates from d's name index at
// version (see nameIndex), and whether the index answered.
func (d *DB) indexedCandidates(ctx context.Context, q Querier, version int64, name string) ([]search.NameCandidate, bool, error) {
	idx, err := d.nameIndex(ctx, q, version)
	if err != nil || idx == nil {
		return nil, false, err
	}
	cs, ok := idx.Match(name)
	return cs, ok, nil
}

// candidateArgs are namePageSQL's arrays of cs.
func candidateArgs(cs []search.NameCandidate) ([]int64, []int32) {
	ids, ranks := make([]int64, len(cs)), make([]int32, len(cs))
	for i, c := range cs {
		ids[i], ranks[i] = c.EntityID, int32(c.MatchRank)
	}
	return ids, ranks
}

// pageMatches returns the matches of cs that the page holds, given each
// one's event count, in ResolveSQL's order.
func pageMatches(cs []search.NameCandidate, counts map[int64]int64) []search.EntityMatch {
	out := make([]search.EntityMatch, 0, len(counts))
	for _, c := range cs {
		if n, ok := counts[c.EntityID]; ok {
			m := c.EntityMatch
			m.Popularity = n
			out = append(out, m)
		}
	}
	slices.SortFunc(out, compareMatches)
	return out
}

// compareMatches is ResolveSQL's order: strongest first, then popularity,
// then id.
func compareMatches(a, b search.EntityMatch) int {
	return cmp.Or(cmp.Compare(a.MatchRank, b.MatchRank), cmp.Compare(b.Popularity, a.Popularity), cmp.Compare(a.EntityID, b.EntityID))
}

// ResolveEntities is ResolveEntities (the package function) on d's routed
// reads, answered from d's name index for a lookup metered at content
// version version (access.Caller.DataVersion; 0 when unknown, which runs
// the statement): one statement, which ranks the index's matches by
// popularity, where the statement would find them too.
func (d *DB) ResolveEntities(ctx context.Context, version int64, name string, limit, offset int) ([]search.EntityMatch, error) {
	q := d.Reader()
	name, limit, offset, err := resolveParams(name, limit, offset)
	if err != nil {
		return nil, err
	}
	cs, ok, err := d.indexedCandidates(ctx, q, version, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return ResolveEntities(ctx, q, name, limit, offset)
	}
	if len(cs) == 0 {
		return []search.EntityMatch{}, nil
	}
	ids, ranks := candidateArgs(cs)
	rows, err := query(ctx, q, namePageSQL, ids, ranks, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("error resolving entity name: %w", err)
	}
	counts := map[int64]int64{}
	var id, n int64
	if _, err := pgx.ForEachRow(rows, []any{&id, &n}, func() error { counts[id] = n; return nil }); err != nil {
		return nil, fmt.Errorf("error resolving entity name: %w", err)
	}
	return pageMatches(cs, counts), nil
}

// The kinds of rows of the folded page (namePageLayout): the page's
// entities, their references.
const (
	namePageEntityKind = iota
	namePageReferenceKind
)

var namePageLayout = func() *rowLayout {
	var (
		e cryptointel.Entity
		r cryptointel.Reference
	)
	return newRowLayout(entityDest(&e, nil), referenceDest(&r, nil))
}()

// namePageFoldedSQL is namePageSQL reading the page's entities themselves
// (their event counts are the matches' popularity) and, when refs, their
// references, in one statement.
func namePageFoldedSQL(refs bool) string {
	sql := "WITH n AS MATERIALIZED (SELECT " + entityColumns +
		" FROM unnest($1::bigint[], $2::int[]) AS c(entity_id, rank) JOIN entities n ON n.id = c.entity_id" +
		" ORDER BY c.rank, n.event_count DESC, n.id LIMIT $3 OFFSET $4)" +
		" SELECT " + namePageLayout.selectList(namePageEntityKind, entityColumns) + " FROM n"
	if refs {
		sql += " UNION ALL SELECT " + namePageLayout.selectList(namePageReferenceKind, referenceColumns) +
			" FROM entity_references er WHERE er.entity_id = ANY(ARRAY(SELECT n.id FROM n))"
	}
	return sql
}

// namePageFoldedTexts are namePageFoldedSQL's two texts.
var namePageFoldedTexts = [2]string{namePageFoldedSQL(false), namePageFoldedSQL(true)}

// ResolveEntitiesFolded is ResolveEntitiesFolded (the package function) on
// d's routed reads, answered from d's name index as DB.ResolveEntities
// is: one statement, which ranks the index's matches by popularity as it
// reads the page's entities (and, when refs, their references).
func (d *DB) ResolveEntitiesFolded(ctx context.Context, version int64, name string, limit, offset int, refs bool) ([]search.EntityMatch, []*cryptointel.Entity, []*cryptointel.Reference, error) {
	q := d.Reader()
	clean, limit, offset, err := resolveParams(name, limit, offset)
	if err != nil {
		return nil, nil, nil, err
	}
	cs, ok, err := d.indexedCandidates(ctx, q, version, clean)
	if err != nil {
		return nil, nil, nil, err
	}
	if !ok {
		return ResolveEntitiesFolded(ctx, q, name, limit, offset, refs)
	}
	if len(cs) == 0 {
		return []search.EntityMatch{}, nil, nil, nil
	}
	ids, ranks := candidateArgs(cs)
	sql := namePageFoldedTexts[0]
	if refs {
		sql = namePageFoldedTexts[1]
	}
	rows, err := query(ctx, q, sql, ids, ranks, limit, offset)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("error resolving entity name: %w", err)
	}
	var (
		ent    *cryptointel.Entity
		ref    *cryptointel.Reference
		counts = map[int64]int64{}
		ents   []*cryptointel.Entity
		out    []*cryptointel.Reference
	)
	err = namePageLayout.scan(rows, "entity matches", func(kind int, buf []any) []any {
		if kind == namePageEntityKind {
			ent = new(cryptointel.Entity)
			return entityDest(ent, buf)
		}
		ref = new(cryptointel.Reference)
		return referenceDest(ref, buf)
	}, func(kind int) error {
		if kind == namePageEntityKind {
			utcEntity(ent)
			counts[ent.ID] = ent.EventCount
			ents = append(ents, ent)
			return nil
		}
		ref.CreatedAt = ref.CreatedAt.UTC()
		out = append(out, ref)
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	slices.SortFunc(out, func(a, b *cryptointel.Reference) int {
		return cmp.Or(cmp.Compare(a.EntityID, b.EntityID), cmp.Compare(a.ID, b.ID))
	})
	return pageMatches(cs, counts), ents, out, nil
}
