package resolvers

import (
	"context"

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
	var c db.EventChildren
	f := graph.ResolvingField(ctx)
	if f == nil {
		return c
	}
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
	eachField(f.Selections, event)
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
		var all []int64
		for _, e := range evs {
			if e == nil {
				continue
			}
			var roles EventRoles
			for _, r := range f.Roles[e.ID] {
				cryptointel.AppendByRole(&roles.Owners, &roles.Participants, r.Role, r.Entity)
				all = append(all, r.Entity.ID)
			}
			l.RolesByEventID.Prime(ctx, e.ID, roles)
		}
		l.Entities(all)
	}
	if c.Evidence {
		for _, e := range evs {
			if e != nil {
				l.EvidenceByEventID.Prime(ctx, e.ID, f.Evidence[e.ID])
			}
		}
	}
}
