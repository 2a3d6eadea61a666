// Package cryptointel is the domain of the service, in the style of
// benbjohnson/wtf's root package: the types the API speaks about (entities,
// relationships, events and their evidence, markets, plans, accounts,
// webhooks, export jobs), the Error type with its codes, the contract's
// limits and the messages of its own types. The packages just above it hold
// parts with a vocabulary of their own: ingest (the ingest lines) and search
// (matches, options and results). It runs no query and knows nothing about
// HTTP or GraphQL: storage (db), the REST facade (rest), the resolvers and
// the workers (jobs) all depend on it, and it depends on none of them. The
// models carry Bun table tags so db can read and write them directly.
package cryptointel

// The GraphQL schema is rendered from its template with the limits of
// limits.go before gqlgen (resolvers) reads it.
//
//go:generate go run ./graph/schemagen
