package rest

import (
	"fmt"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/cryptointel/cryptointel/rest/ops"
)

// The fixed GraphQL operations of the /v1 routes live in package rest/ops
// (ops/*.graphql, shared fragments in ops/fragments). The fragments of the
// event's wire shape (EventFields, EntityRefFields, EvidenceFields,
// EventCompactFields) are generated from the wire tables.
//
//go:generate go run ../wire/gen -fragments ops/fragments

// operation is one fixed GraphQL operation, ready to execute (rest/ops).
type operation = ops.Operation

// loadOperations reads, assembles and parses every embedded operation
// (rest/ops). When schema is non-nil each one is also validated against
// it, so a route whose operation does not fit the schema fails the service
// at startup.
func loadOperations(schema *ast.Schema) (map[string]*operation, error) {
	all, err := ops.Load()
	if err != nil {
		return nil, err
	}
	if schema != nil {
		for file, op := range all {
			if errs := validator.ValidateWithRules(schema, op.Doc, nil); len(errs) > 0 {
				return nil, fmt.Errorf("error validating %s.graphql against the schema: %w", file, errs)
			}
		}
	}
	return all, nil
}

// fixedOperations are the embedded operations, loaded once (for the route
// table's own checks; New loads and validates them again).
var fixedOperations = sync.OnceValue(func() map[string]*operation {
	all, err := ops.Load()
	if err != nil {
		panic(fmt.Sprintf("rest: the embedded operations do not load: %v", err))
	}
	return all
})
