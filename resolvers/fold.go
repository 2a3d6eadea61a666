package resolvers

import (
	"context"
	"fmt"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
)

// The plan decides the SQL: a resolver that reads a page of events looks at
// the selection below the field it resolves (graph.ResolvingField) and
// folds the children its events will be asked for — owners and
// participants, evidence — into its own statement (db/fold.go). The
// children are primed into the request's loaders, which then answer the
// child fields from memory: the values, and so the bytes written, are the
// loaders' own.

// selectedEventChildren reports which children of events the field
// resolved in ctx selects: on its events (a list of events) or its
// connection's nodes. Conditions (@skip, @include) are not applied: a
// child skipped at run time is read and not written.
func selectedEventChildren(ctx context.Context) db.EventChildren {
	f := graph.ResolvingField(ctx)
	if f == nil {
		return db.EventChildren{}
	}
	return withLean(ctx, eventChildrenOf(f.Selections))
}

// withLean marks in c what a folded read need not fetch because no field
// of the whole document writes it: the events' summary and bullets, the
// evidence's content (the heaviest columns). The whole document is read,
// not only the resolving field's selection, because the values folded are
// primed into the request's loaders, which any other field of the document
// may read. Any field of that name counts, whatever its type or condition.
func withLean(ctx context.Context, c db.EventChildren) db.EventChildren {
	if !c.Any() || !graphql.HasOperationContext(ctx) {
		return c
	}
	op := graphql.GetOperationContext(ctx).Operation
	if op == nil {
		return c
	}
	text, content := false, false
	var walk func(sel ast.SelectionSet, depth int)
	walk = func(sel ast.SelectionSet, depth int) {
		if depth > 64 {
			text, content = true, true
			return
		}
		for _, s := range sel {
			switch s := s.(type) {
			case *ast.Field:
				switch s.Name {
				case "summary", "bullets":
					text = true
				case "content":
					content = true
				}
				walk(s.SelectionSet, depth+1)
			case *ast.InlineFragment:
				walk(s.SelectionSet, depth+1)
			case *ast.FragmentSpread:
				if s.Definition == nil {
					text, content = true, true
					return
				}
				walk(s.Definition.SelectionSet, depth+1)
			}
		}
	}
	walk(op.SelectionSet, 0)
	c.NoText, c.NoContent = !text, !content
	return c
}

// eventChildrenOf reports which children of events sel, the selection of
// a list of events or of an event connection, selects.
func eventChildrenOf(sel ast.SelectionSet) db.EventChildren {
	var c db.EventChildren
	var event func(*ast.Field)
	event = func(fd *ast.Field) {
		switch fd.Name {
		case "owners", "eventOwner", "participants", "eventParticipants":
			c.Roles = true
		case "evidence", "posts":
			c.Evidence = true
		case "nodes":
			eachField(fd.SelectionSet, event)
		}
	}
	eachField(sel, event)
	return c
}

// eachField calls fn with each field of sel, fragments expanded.
func eachField(sel ast.SelectionSet, fn func(*ast.Field)) {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			fn(s)
		case *ast.InlineFragment:
			eachField(s.SelectionSet, fn)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				eachField(s.Definition.SelectionSet, fn)
			}
		}
	}
}

// primeFolded records the children c of evs, read with them, in the
// loaders, as their loads would have: every event of the page gets its
// (possibly empty) roles and evidence.
func (l *Loaders) primeFolded(ctx context.Context, evs []*cryptointel.Event, c db.EventChildren, f *db.FoldedChildren) {
	if f == nil {
		return
	}
	if c.Roles {
		l.RolesByEventID.reserve(len(evs))
		total := 0
		for _, e := range evs {
			if e != nil {
				total += len(f.Roles[e.ID])
			}
		}
		// Every event's owners and participants (in their order, nil where
		// none, as AppendByRole builds them) are parts of one slice.
		ents := make([]*cryptointel.Entity, 0, total)
		all := make([]int64, 0, total)
		for _, e := range evs {
			if e == nil {
				continue
			}
			refs := f.Roles[e.ID]
			start := len(ents)
			for _, r := range refs {
				if cryptointel.IsOwner(r.Role) {
					ents = append(ents, r.Entity)
				}
			}
			mid := len(ents)
			for _, r := range refs {
				if !cryptointel.IsOwner(r.Role) {
					ents = append(ents, r.Entity)
				}
				all = append(all, r.Entity.ID)
			}
			var roles EventRoles
			if mid > start {
				roles.Owners = ents[start:mid:mid]
			}
			if end := len(ents); end > mid {
				roles.Participants = ents[mid:end:end]
			}
			l.RolesByEventID.Prime(ctx, e.ID, roles)
		}
		l.Entities(all)
	}
	if c.Evidence {
		l.EvidenceByEventID.reserve(len(evs))
		for _, e := range evs {
			if e != nil {
				l.EvidenceByEventID.Prime(ctx, e.ID, f.Evidence[e.ID])
			}
		}
	}
}

// fieldsNamed returns the fields of sel named name, fragments expanded.
func fieldsNamed(sel ast.SelectionSet, name string) []*ast.Field {
	var out []*ast.Field
	eachField(sel, func(f *ast.Field) {
		if f.Name == name {
			out = append(out, f)
		}
	})
	return out
}

// foldEntityPage reads the entity id for Query.entity when its selection
// asks for one page of its own events — its events (an organization's
// feed), its timeline, research or media — without a cursor (or, for
// events, a category), as foldEntityTree reads its related entities' pages
// — with the page and the children it writes in one statement
// (db.EntityPageFolded), and primes the loaders: the page's resolver then
// reads it from memory. ok is false when the selection is not of that
// shape, or its arguments could not be read ahead: the caller then loads
// as usual.
func (r *queryResolver) foldEntityPage(ctx context.Context, id int64) (e *cryptointel.Entity, ok bool, err error) {
	f := graph.ResolvingField(ctx)
	if f == nil || len(fieldsNamed(f.Selections, "relationships")) > 0 {
		return nil, false, nil
	}
	var pages []*ast.Field
	for _, name := range entityPageFields {
		pages = append(pages, fieldsNamed(f.Selections, name)...)
	}
	if len(pages) != 1 {
		return nil, false, nil
	}
	key, ok := r.foldablePageKey(ctx, id, pages[0])
	if !ok {
		return nil, false, nil
	}
	children := withLean(ctx, eventChildrenOf(pages[0].SelectionSet))
	e, rows, folded, err := db.EntityPageFolded(ctx, r.store.Reader(), id, key.filter(), children)
	if err != nil {
		return nil, true, fmt.Errorf("error loading: %w", err)
	}
	l := r.loaders(ctx)
	l.EntityByID.Prime(ctx, id, e)
	// As EventsByEntityID's fetch records them.
	evs := make([]*cryptointel.Event, len(rows))
	for i, row := range rows {
		evs[i] = row.Event
	}
	l.EventsByEntityID.Prime(ctx, key, evs)
	l.EventsOf(evs)
	l.primeFolded(ctx, evs, children, folded)
	return e, true, nil
}

// foldEntityReferences reads the entity id for Query.entity when its
// selection asks for its references, with them in one statement
// (db.EntityWithReferences), and primes the loaders: Entity.references
// then reads them from memory. ok is false when the selection does not
// ask for them: the caller then loads as usual. It runs after the folds
// of a tree and of a page, whose statements do not read references.
func (r *queryResolver) foldEntityReferences(ctx context.Context, id int64) (e *cryptointel.Entity, ok bool, err error) {
	f := graph.ResolvingField(ctx)
	if f == nil || len(fieldsNamed(f.Selections, "references")) == 0 {
		return nil, false, nil
	}
	e, refs, err := db.EntityWithReferences(ctx, r.store.Reader(), id)
	if err != nil {
		return nil, true, fmt.Errorf("error loading: %w", err)
	}
	l := r.loaders(ctx)
	l.EntityByID.Prime(ctx, id, e)
	if e != nil {
		l.ReferencesByEntityID.Prime(ctx, id, refs)
	}
	return e, true, nil
}

// foldOrganization reads the organization id for Query.organization when
// its selection asks for its radar or signal events (one field of each
// at most, with the same size when both), with those pages and the
// children they write in one statement — db.BriefsFolded for both,
// db.EntityPageFolded for one — and primes the loaders: the pages'
// resolvers then read them from memory. ok is false when the selection is
// not of that shape, or its arguments could not be read ahead: the caller
// then loads as usual.
func (r *queryResolver) foldOrganization(ctx context.Context, id int64) (e *cryptointel.Entity, ok bool, err error) {
	f := graph.ResolvingField(ctx)
	if f == nil {
		return nil, false, nil
	}
	var (
		keys     []EntityEventsKey
		children db.EventChildren
	)
	for _, name := range []string{"radar", "signal"} {
		fds := includedFieldsNamed(ctx, f.Selections, name)
		switch len(fds) {
		case 0:
			continue
		case 1:
		default:
			return nil, false, nil
		}
		a, ok := graph.FieldArgs(ctx, "Organization", fds[0])
		if !ok {
			return nil, false, nil
		}
		first, _ := a["first"].(*int)
		keys = append(keys, organizationEventsKey(ctx, id, name == "signal", first))
		k := eventChildrenOf(fds[0].SelectionSet)
		children.Roles = children.Roles || k.Roles
		children.Evidence = children.Evidence || k.Evidence
	}
	if len(keys) == 0 || len(keys) == 2 && keys[0].Limit != keys[1].Limit {
		return nil, false, nil
	}
	children = withLean(ctx, children)
	pages := make([][]cryptointel.EntityEvent, len(keys))
	var folded *db.FoldedChildren
	if len(keys) == 2 {
		b, err := db.BriefsFolded(ctx, r.store.Reader(), []int64{id}, keys[0].filter(), children)
		if err != nil {
			return nil, true, fmt.Errorf("error loading: %w", err)
		}
		if len(b.Entities) > 0 {
			e = b.Entities[0]
		}
		pages[0], pages[1], folded = b.Radar, b.Signal, b.Children
	} else {
		e, pages[0], folded, err = db.EntityPageFolded(ctx, r.store.Reader(), id, keys[0].filter(), children)
		if err != nil {
			return nil, true, fmt.Errorf("error loading: %w", err)
		}
	}
	l := r.loaders(ctx)
	l.EntityByID.Prime(ctx, id, e)
	var all []*cryptointel.Event
	for i, rows := range pages {
		evs := make([]*cryptointel.Event, len(rows))
		for j, row := range rows {
			evs[j] = row.Event
		}
		l.EventsByEntityID.Prime(ctx, keys[i], evs)
		all = append(all, evs...)
	}
	l.EventsOf(all)
	l.primeFolded(ctx, all, children, folded)
	return e, true, nil
}

// foldSignalHistory reads the organization id for Query.organization when
// its selection asks for its signal history (once), with those counts in
// one statement (db.EntityWithSignalHistory), and primes the loaders:
// Organization.signalHistory then reads them from memory. ok is false when
// the selection is not of that shape, or its arguments could not be read
// ahead: the caller then loads as usual.
func (r *queryResolver) foldSignalHistory(ctx context.Context, id int64) (e *cryptointel.Entity, ok bool, err error) {
	f := graph.ResolvingField(ctx)
	if f == nil {
		return nil, false, nil
	}
	fds := includedFieldsNamed(ctx, f.Selections, "signalHistory")
	if len(fds) != 1 {
		return nil, false, nil
	}
	a, ok := graph.FieldArgs(ctx, "Organization", fds[0])
	if !ok {
		return nil, false, nil
	}
	days, _ := a["days"].(*int)
	key, _, _ := r.signalHistoryKey(ctx, id, days)
	e, rows, err := db.EntityWithSignalHistory(ctx, r.store.Reader(), id, time.Unix(key.FromDay, 0))
	if err != nil {
		return nil, true, fmt.Errorf("error loading: %w", err)
	}
	l := r.loaders(ctx)
	l.EntityByID.Prime(ctx, id, e)
	if e != nil {
		l.HistoryByEntityID.Prime(ctx, key, rows)
	}
	return e, true, nil
}

// includedFieldsNamed returns the fields of sel named name (fieldsNamed)
// that their own @skip and @include directives leave in the response.
func includedFieldsNamed(ctx context.Context, sel ast.SelectionSet, name string) []*ast.Field {
	var out []*ast.Field
	for _, fd := range fieldsNamed(sel, name) {
		if included(ctx, fd) {
			out = append(out, fd)
		}
	}
	return out
}

// included reports whether fd is in the response by its own @skip and
// @include directives (the operation's variables given).
func included(ctx context.Context, fd *ast.Field) bool {
	var vars map[string]any
	if graphql.HasOperationContext(ctx) {
		vars = graphql.GetOperationContext(ctx).Variables
	}
	if d := fd.Directives.ForName("skip"); d != nil {
		if skip, _ := d.ArgumentMap(vars)["if"].(bool); skip {
			return false
		}
	}
	if d := fd.Directives.ForName("include"); d != nil {
		if include, ok := d.ArgumentMap(vars)["if"].(bool); ok && !include {
			return false
		}
	}
	return true
}

// entityPageFields are the fields of an entity that read one page of its
// own events (EventsByEntityID), which foldEntityPage reads with it.
var entityPageFields = []string{"events", "timeline", "research", "media"}

// foldablePageKey is the key the resolver of fd, one of an entity's
// entityPageFields, loads its page by for the entity id, read ahead —
// with the one more event the page reads to know whether another follows
// — and whether a fold may read that page for it: its arguments coerce and
// are valid, and it asks for no cursor (a cursor's page is another key).
func (r *queryResolver) foldablePageKey(ctx context.Context, id int64, fd *ast.Field) (EntityEventsKey, bool) {
	if fd.Name == "events" {
		return foldableEventsKey(ctx, id, fd)
	}
	a, ok := graph.FieldArgs(ctx, "Entity", fd)
	if !ok {
		return EntityEventsKey{}, false
	}
	if after, _ := a["after"].(*string); after != nil && *after != "" {
		return EntityEventsKey{}, false
	}
	since, _ := a["since"].(*time.Time)
	first, _ := a["first"].(*int)
	var key EntityEventsKey
	switch fd.Name {
	case "timeline":
		key = timelineKey(ctx, id, since, first)
	case "research", "media":
		content := contentResearch
		if fd.Name == "media" {
			content = contentMedia
		}
		offset, _ := a["offset"].(*int)
		var err error
		if key, _, err = r.contentKey(ctx, id, content, since, first, offset); err != nil {
			return EntityEventsKey{}, false // the resolver reports it
		}
	default:
		return EntityEventsKey{}, false
	}
	key.Limit++
	return key, true
}

// foldableEventsKey is the key Entity.events loads its page by for the
// entity id, read ahead from fd, an events field below it — with the one
// more event the page reads to know whether another follows — and whether
// a fold may read that page for it: its arguments coerce, and it asks for
// neither a cursor nor a category (the resolver checks a category, and a
// cursor's page is another key).
func foldableEventsKey(ctx context.Context, id int64, fd *ast.Field) (EntityEventsKey, bool) {
	ea, ok := graph.FieldArgs(ctx, "Entity", fd)
	if !ok {
		return EntityEventsKey{}, false
	}
	after, _ := ea["after"].(*string)
	category, _ := ea["category"].(*string)
	if (after != nil && *after != "") || category != nil {
		return EntityEventsKey{}, false
	}
	surface, _ := ea["surface"].(*graph.Surface)
	since, _ := ea["since"].(*time.Time)
	sort, _ := ea["sort"].(*graph.EventSort)
	first, _ := ea["first"].(*int)
	offset, _ := ea["offset"].(*int)
	key, _ := entityEventsKey(ctx, id, surface, since, category, sort, first, offset)
	key.Limit++
	return key, true
}

// foldEntityTree reads the entity id for Query.entity when its selection
// asks for its relationships — with, when their related entities' events
// are asked for too (three hops), those events and their children — in one
// statement (db.EntityTreeFolded), and primes the loaders with every
// level: the resolvers below then read them from memory. ok is false when
// the selection is not of that shape (one relationships field, at most one
// events field below its related entities, without a cursor or category),
// or its arguments could not be read ahead: the caller then loads as
// usual.
func (r *queryResolver) foldEntityTree(ctx context.Context, id int64) (e *cryptointel.Entity, ok bool, err error) {
	f := graph.ResolvingField(ctx)
	if f == nil {
		return nil, false, nil
	}
	relFields := fieldsNamed(f.Selections, "relationships")
	if len(relFields) != 1 {
		return nil, false, nil
	}
	ra, ok := graph.FieldArgs(ctx, "Entity", relFields[0])
	if !ok {
		return nil, false, nil
	}
	first, _ := ra["first"].(*int)
	offset, _ := ra["offset"].(*int)
	typ, _ := ra["relationshipType"].(*string)
	dir, _ := ra["direction"].(*graph.RelationshipDirection)
	rkey := relationshipsKey(ctx, id, first, offset, typ, dir)
	rf := db.RelationshipFilter{Limit: rkey.Limit, Offset: rkey.Offset, Type: rkey.Type, Direction: rkey.Direction}

	var (
		ekey     EntityEventsKey
		ef       *db.EntityEventFilter
		children db.EventChildren
	)
	var evFields []*ast.Field
	for _, re := range fieldsNamed(relFields[0].SelectionSet, "relatedEntity") {
		evFields = append(evFields, fieldsNamed(re.SelectionSet, "events")...)
	}
	if len(evFields) == 1 {
		if k, ok := foldableEventsKey(ctx, 0, evFields[0]); ok {
			ekey = k
			filter := ekey.filter()
			ef = &filter
			children = withLean(ctx, eventChildrenOf(evFields[0].SelectionSet))
			// The one more is not shown: its children are not read.
			children.Shown = ekey.Limit - 1
		}
	}

	t, err := db.EntityTreeFolded(ctx, r.store.Reader(), []int64{id}, rf, ef, children)
	if err != nil {
		return nil, true, fmt.Errorf("error loading: %w", err)
	}
	l := r.loaders(ctx)
	for _, ent := range t.Entities {
		if ent.ID == id {
			e = ent
		}
	}
	l.EntityByID.Prime(ctx, id, e)
	// As RelationshipsByEntityID's fetch records them.
	var rels []*cryptointel.EntityRelationship
	var related []int64
	for _, rel := range t.Relationships {
		if rel.EntityID == id {
			rels = append(rels, rel)
		}
		related = append(related, rel.RelatedEntityID)
		if rel.Related != nil {
			l.EntityByID.Prime(ctx, rel.Related.ID, rel.Related)
		}
	}
	l.RelationshipsByEntityID.Prime(ctx, rkey, rels)
	l.Entities(related)
	if ef == nil {
		return e, true, nil
	}
	// As EventsByEntityID's fetch records them; the children are primed
	// for the events each page shows (the tree read no others').
	byEntity := make(map[int64][]*cryptointel.Event, len(t.RelatedIDs))
	var evs []*cryptointel.Event
	var all []int64
	for _, row := range t.Events {
		if children.Shown == 0 || len(byEntity[row.EntityID]) < children.Shown {
			evs = append(evs, row.Event)
		}
		byEntity[row.EntityID] = append(byEntity[row.EntityID], row.Event)
		all = append(all, row.Event.ID)
	}
	for _, rid := range t.RelatedIDs {
		k := ekey
		k.EntityID = rid
		l.EventsByEntityID.Prime(ctx, k, byEntity[rid])
	}
	l.Events(all)
	l.primeFolded(ctx, evs, children, t.Children)
	return e, true, nil
}
