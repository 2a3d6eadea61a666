package db

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/search"
)

// Name resolution in memory. A DB keeps a search.NameIndex of
// entity_names read at a content version (data_version, which every write
// to entity_names or entities bumps as it commits), with each entity's
// popularity (entities.event_count) read in the same snapshot: a lookup
// metered at that version or an older one finds its matches in the index,
// ranks them by that popularity and chooses the page itself, and sends a
// statement only to read the page's entities when it shows them
// (namePageFoldedSQL); the first lookup metered at a newer version reads
// the names again first (nameIndexSQL). A name the index cannot answer
// exactly, and a lookup whose version is unknown (0), run ResolveSQL as
// before. The answers are ResolveSQL's, row for row
// (TestNameIndexMatchesTheStatement).

// nameIndexMaxNames bounds the names a name index holds (about 200 bytes
// and ten trigrams each; the demo world has 1,526): a directory with more
// is resolved by ResolveSQL alone, its index scans then cheaper than
// reading every name again at each content version.
const nameIndexMaxNames = 50_000

// nameIndexSQL reads every name with pg_trgm's trigrams of its normalized
// form, the order of its value in the database's collation and its
// entity's event count, each row with the content version of the snapshot
// read, whether the planner's count of names is over $1, the bound (then
// one row and no names; none either, one row, when there are no names),
// and whether norm_text folds ASCII letters to ASCII lower case, as the
// index assumes (a database whose locale folds otherwise keeps the
// statement; a subquery, so that it is computed once and not for each
// name).
const nameIndexSQL = `SELECT v.version, ` + nameCountSQL + ` > $1::bigint,
	(SELECT norm_text('ABCDEFGHIJKLMNOPQRSTUVWXYZ') = 'abcdefghijklmnopqrstuvwxyz'),
	en.entity_id, en.kind, en.value, en.norm, en.trigrams, en.value_order, en.event_count
	FROM data_version v LEFT JOIN (
		SELECT f.entity_id, f.kind, f.value, f.norm, show_trgm(f.norm) AS trigrams,
			dense_rank() OVER (ORDER BY f.value)::int AS value_order, e.event_count
		FROM entity_names f JOIN entities e ON e.id = f.entity_id
		WHERE ` + nameCountSQL + ` <= $1::bigint
	) en ON true`

// nameCountSQL is the planner's count of names.
const nameCountSQL = `(SELECT c.reltuples FROM pg_class c WHERE c.oid = 'entity_names'::regclass)`

// indexedNames is a name index and each indexed entity's popularity
// (entities.event_count), read in one snapshot.
type indexedNames struct {
	*search.NameIndex
	popularity map[int64]int64
}

// nameIndexes keeps a DB's newest name index and serializes its reads.
type nameIndexes struct {
	mu sync.Mutex
	// idx was read at content version version; nil with version > 0 when
	// the names were too many to index, or folded otherwise.
	idx     *indexedNames
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
func (n *nameIndexes) current(version int64) (*indexedNames, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.idx, n.version > 0 && n.version >= version
}

// nameIndex returns an index of entity_names read at content version
// version or later, reading the names on q when the one kept is older;
// nil when version is unknown, or the names are too many to index or
// folded otherwise than the index assumes.
func (d *DB) nameIndex(ctx context.Context, q Querier, version int64) (*indexedNames, error) {
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
func readNameIndex(ctx context.Context, q Querier, max int) (*indexedNames, int64, error) {
	rows, err := query(ctx, q, nameIndexSQL, max)
	if err != nil {
		return nil, 0, fmt.Errorf("error reading entity names: %w", err)
	}
	defer rows.Close()
	var (
		version     int64
		many, folds bool
		names       []search.NameRow
		popularity  = map[int64]int64{}
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
			events       *int64
		)
		if err := rows.Scan(&version, &many, &folds, &id, &kind, &v, &nrm, &trigrams, &order, &events); err != nil {
			return nil, 0, fmt.Errorf("error scanning entity names: %w", err)
		}
		if id != nil {
			names = append(names, search.NameRow{EntityID: *id, Kind: *kind, Value: *v, Norm: *nrm, Trigrams: trigrams, ValueOrder: int(*order)})
			popularity[*id] = *events
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("error reading entity names: %w", err)
	}
	if many || !folds {
		return nil, version, nil
	}
	return &indexedNames{search.BuildNameIndex(names), popularity}, version, nil
}

// indexedPage returns the page (limit matches after offset) of name's
// matches in d's name index at version (see nameIndex), ranked as
// ResolveSQL ranks them, by the popularity read with the index; and
// whether the index answered.
func (d *DB) indexedPage(ctx context.Context, q Querier, version int64, name string, limit, offset int) ([]search.EntityMatch, bool, error) {
	idx, err := d.nameIndex(ctx, q, version)
	if err != nil || idx == nil {
		return nil, false, err
	}
	cs, ok := idx.Match(name)
	if !ok {
		return nil, false, nil
	}
	ms := make([]search.EntityMatch, len(cs))
	for i, c := range cs {
		ms[i] = c.EntityMatch
		ms[i].Popularity = idx.popularity[c.EntityID]
	}
	slices.SortFunc(ms, compareMatches)
	ms = ms[min(offset, len(ms)):]
	return ms[:min(limit, len(ms))], true, nil
}

// compareMatches is ResolveSQL's order: strongest first, then popularity,
// then id.
func compareMatches(a, b search.EntityMatch) int {
	return cmp.Or(cmp.Compare(a.MatchRank, b.MatchRank), cmp.Compare(b.Popularity, a.Popularity), cmp.Compare(a.EntityID, b.EntityID))
}

// ResolveEntities is ResolveEntities (the package function) on d's routed
// reads, answered from d's name index for a lookup metered at content
// version version (access.Caller.DataVersion; 0 when unknown, which runs
// the statement): no statement once the index is read, which holds the
// matches and their popularity as the statement would find them.
func (d *DB) ResolveEntities(ctx context.Context, version int64, name string, limit, offset int) ([]search.EntityMatch, error) {
	q := d.Reader()
	name, limit, offset, err := resolveParams(name, limit, offset)
	if err != nil {
		return nil, err
	}
	ms, ok, err := d.indexedPage(ctx, q, version, name, limit, offset)
	if err != nil {
		return nil, err
	}
	if !ok {
		return ResolveEntities(ctx, q, name, limit, offset)
	}
	return ms, nil
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

// namePageFoldedSQL reads the entities $1, a page of matches, and, when
// refs, their references, in one statement. The ids as a subquery's
// array: as a parameter, of unknown length to a generic plan, they made
// the small entities table look cheaper read whole (briefsStatement).
func namePageFoldedSQL(refs bool) string {
	const ids = "ANY(ARRAY(SELECT unnest($1::bigint[])))"
	sql := "SELECT " + namePageLayout.selectList(namePageEntityKind, entityColumns) + " FROM entities n WHERE n.id = " + ids
	if refs {
		sql += " UNION ALL SELECT " + namePageLayout.selectList(namePageReferenceKind, referenceColumns) +
			" FROM entity_references er WHERE er.entity_id = " + ids
	}
	return sql
}

// namePageFoldedTexts are namePageFoldedSQL's two texts.
var namePageFoldedTexts = [2]string{namePageFoldedSQL(false), namePageFoldedSQL(true)}

// ResolveEntitiesFolded is ResolveEntitiesFolded (the package function) on
// d's routed reads, answered from d's name index as DB.ResolveEntities
// is: the index chooses the page, and one statement reads the page's
// entities (and, when refs, their references).
func (d *DB) ResolveEntitiesFolded(ctx context.Context, version int64, name string, limit, offset int, refs bool) ([]search.EntityMatch, []*cryptointel.Entity, []*cryptointel.Reference, error) {
	q := d.Reader()
	clean, limit, offset, err := resolveParams(name, limit, offset)
	if err != nil {
		return nil, nil, nil, err
	}
	ms, ok, err := d.indexedPage(ctx, q, version, clean, limit, offset)
	if err != nil {
		return nil, nil, nil, err
	}
	if !ok {
		return ResolveEntitiesFolded(ctx, q, name, limit, offset, refs)
	}
	if len(ms) == 0 {
		return []search.EntityMatch{}, nil, nil, nil
	}
	ids := make([]int64, len(ms))
	for i, m := range ms {
		ids[i] = m.EntityID
	}
	sql := namePageFoldedTexts[0]
	if refs {
		sql = namePageFoldedTexts[1]
	}
	rows, err := query(ctx, q, sql, ids)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("error resolving entity name: %w", err)
	}
	var (
		ent  *cryptointel.Entity
		ref  *cryptointel.Reference
		byID = make(map[int64]*cryptointel.Entity, len(ms))
		ents []*cryptointel.Entity
		out  []*cryptointel.Reference
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
			byID[ent.ID] = ent
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
	// The page's entities in its order; a match whose entity is gone
	// since the index was read is left out, as the statement left it.
	page := ms[:0]
	for _, m := range ms {
		if e, ok := byID[m.EntityID]; ok {
			page = append(page, m)
			ents = append(ents, e)
		}
	}
	return page, ents, out, nil
}
