package db

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/internal/memo"
	"github.com/cryptointel/cryptointel/search"
)

// ListEntities returns the entity directory ordered by id.
func ListEntities(ctx context.Context, q Querier, limit, offset int) ([]*cryptointel.Entity, error) {
	out, err := readRows(ctx, q, "SELECT "+entityColumns+" FROM entities n ORDER BY n.id LIMIT $1 OFFSET $2",
		[]any{limit, offset}, entityDest, utcEntity)
	if err != nil {
		return nil, fmt.Errorf("error listing entities: %w", err)
	}
	return out, nil
}

// The kinds of rows of ResolveEntitiesFolded (resolveLayout): the
// matches, their entities, the entities' references.
const (
	resolveMatchKind = iota
	resolveEntityKind
	resolveReferenceKind
)

// referenceColumns are the entity_references columns a folded read
// selects (alias er), in referenceDest's order.
const referenceColumns = "er.id, er.entity_id, er.reference_type, er.title, er.url, er.created_at"

func referenceDest(x *cryptointel.Reference, dst []any) []any {
	return append(dst, &x.ID, &x.EntityID, &x.ReferenceType, &x.Title, &x.URL, &x.CreatedAt)
}

// matchDest are the destinations of a match row (resolveSQL's columns).
func matchDest(m *search.EntityMatch, sim *float64, dst []any) []any {
	return append(dst, &m.EntityID, &m.MatchedVia, &m.MatchedValue, &m.MatchRank, &m.MatchType, sim, &m.Popularity)
}

var resolveLayout = func() *rowLayout {
	var (
		m   search.EntityMatch
		sim float64
		e   cryptointel.Entity
		r   cryptointel.Reference
	)
	return newRowLayout(matchDest(&m, &sim, nil), entityDest(&e, nil), referenceDest(&r, nil))
}()

// ResolveEntitiesFolded is ResolveEntities with, in the same statement,
// the matched entities and, when refs, their references (as
// ReferencesByEntityIDs orders them: by entity, then id), as typed rows
// (fold_rows.go): a name lookup that writes its entities costs one
// statement instead of three.
func ResolveEntitiesFolded(ctx context.Context, q Querier, name string, limit, offset int, refs bool) ([]search.EntityMatch, []*cryptointel.Entity, []*cryptointel.Reference, error) {
	name, limit, offset, err := resolveParams(name, limit, offset)
	if err != nil {
		return nil, nil, nil, err
	}
	long := utf8.RuneCountInString(name) >= minFuzzyRunes
	sql := resolveFoldedTexts.Get([2]bool{long, refs}, func() string { return resolveFoldedSQL(long, refs) })
	rows, err := query(ctx, q, sql, name, limit, offset)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("error resolving entity name: %w", err)
	}
	var (
		m       search.EntityMatch
		sim     float64
		ent     *cryptointel.Entity
		ref     *cryptointel.Reference
		matches = []search.EntityMatch{}
		ents    []*cryptointel.Entity
		out     []*cryptointel.Reference
	)
	err = resolveLayout.scan(rows, "entity matches", func(kind int, buf []any) []any {
		switch kind {
		case resolveMatchKind:
			m = search.EntityMatch{}
			return matchDest(&m, &sim, buf)
		case resolveEntityKind:
			ent = new(cryptointel.Entity)
			return entityDest(ent, buf)
		default:
			ref = new(cryptointel.Reference)
			return referenceDest(ref, buf)
		}
	}, func(kind int) error {
		switch kind {
		case resolveMatchKind:
			matches = append(matches, m)
		case resolveEntityKind:
			utcEntity(ent)
			ents = append(ents, ent)
		default:
			ref.CreatedAt = ref.CreatedAt.UTC()
			out = append(out, ref)
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	// resolveSQL's order: strongest first, then popularity, then id.
	slices.SortFunc(matches, func(a, b search.EntityMatch) int {
		return cmp.Or(cmp.Compare(a.MatchRank, b.MatchRank), cmp.Compare(b.Popularity, a.Popularity), cmp.Compare(a.EntityID, b.EntityID))
	})
	slices.SortFunc(out, func(a, b *cryptointel.Reference) int {
		return cmp.Or(cmp.Compare(a.EntityID, b.EntityID), cmp.Compare(a.ID, b.ID))
	})
	return matches, ents, out, nil
}

// EntityWithReferences reads, in one statement, the entity id (nil when
// there is none) and its references (as ReferencesByEntityIDs orders
// them: by id), as typed rows (fold_rows.go): an entity written with its
// references costs one statement instead of two.
func EntityWithReferences(ctx context.Context, q Querier, id int64) (*cryptointel.Entity, []*cryptointel.Reference, error) {
	e, refs, err := readEntityWith(ctx, q, entityReferencesLayout, "the entity with its references", entityWithReferencesSQL, []any{id},
		referenceDest, func(r *cryptointel.Reference) { r.CreatedAt = r.CreatedAt.UTC() })
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(refs, func(a, b *cryptointel.Reference) int { return cmp.Compare(a.ID, b.ID) })
	return e, refs, nil
}

// entityReferencesLayout lays out EntityWithReferences' rows: the entity
// (entityWithKind), then its references.
var entityReferencesLayout = func() *rowLayout {
	var (
		e cryptointel.Entity
		r cryptointel.Reference
	)
	return newRowLayout(entityDest(&e, nil), referenceDest(&r, nil))
}()

// entityWithReferencesSQL is EntityWithReferences' statement: the entity
// by its key, its references by entity_references_entity_idx.
var entityWithReferencesSQL = "SELECT " + entityReferencesLayout.selectList(entityWithKind, entityColumns) + " FROM entities n WHERE n.id = $1::bigint" +
	" UNION ALL SELECT " + entityReferencesLayout.selectList(entityChildKind, referenceColumns) + " FROM entity_references er WHERE er.entity_id = $1::bigint"

// The kinds of rows of a statement that reads an entity with one kind of
// child (readEntityWith).
const (
	entityWithKind = iota
	entityChildKind
)

// readEntityWith runs sql, a statement of layout l whose rows are the
// entity (entityWithKind; none when it does not exist) and its children
// (entityChildKind, scanned by dest and put right by fix), and returns
// them, the children in the statement's order. what names the read in
// errors.
func readEntityWith[T any](ctx context.Context, q Querier, l *rowLayout, what, sql string, args []any, dest func(*T, []any) []any, fix func(*T)) (*cryptointel.Entity, []*T, error) {
	rows, err := query(ctx, q, sql, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("error selecting %s: %w", what, err)
	}
	var (
		ent, e *cryptointel.Entity
		x      *T
		out    = []*T{}
	)
	err = l.scan(rows, what, func(kind int, buf []any) []any {
		if kind == entityWithKind {
			e = new(cryptointel.Entity)
			return entityDest(e, buf)
		}
		x = new(T)
		return dest(x, buf)
	}, func(kind int) error {
		if kind == entityWithKind {
			utcEntity(e)
			ent = e
			return nil
		}
		if fix != nil {
			fix(x)
		}
		out = append(out, x)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return ent, out, nil
}

// resolveFoldedTexts keeps ResolveEntitiesFolded's texts, by long name
// and refs.
var resolveFoldedTexts memo.Bounded[[2]bool, string]

// resolveFoldedSQL is ResolveEntitiesFolded's statement.
func resolveFoldedSQL(long, refs bool) string {
	sql := "WITH r AS MATERIALIZED (" + resolveSQL(long) + ") SELECT " +
		resolveLayout.selectList(resolveMatchKind, "r.entity_id, r.kind, r.value, r.rank, r.match_type, r.sim, r.event_count") + " FROM r" +
		" UNION ALL SELECT " + resolveLayout.selectList(resolveEntityKind, entityColumns) +
		" FROM entities n WHERE n.id = ANY(ARRAY(SELECT entity_id FROM r))"
	if refs {
		sql += " UNION ALL SELECT " + resolveLayout.selectList(resolveReferenceKind, referenceColumns) +
			" FROM entity_references er WHERE er.entity_id = ANY(ARRAY(SELECT entity_id FROM r))"
	}
	return sql
}

// resolveParams checks and defaults ResolveEntities' parameters: the name
// cleaned (EINVALID when nothing is left), limit <= 0 the default, offset <
// 0 zero.
func resolveParams(name string, limit, offset int) (string, int, int, error) {
	name = cleanName(name)
	if name == "" {
		return "", 0, 0, &cryptointel.Error{Code: cryptointel.EINVALID, Message: search.MsgNameRequired}
	}
	if limit <= 0 {
		limit = cryptointel.ResolveEntitiesFirst.Default
	}
	return name, limit, max(offset, 0), nil
}
