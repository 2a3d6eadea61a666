// Package cryptointel is the domain of the service, in the style of
// benbjohnson/wtf's root package: the types the API speaks about (entities,
// relationships, events and their evidence, markets, plans, accounts), the
// Error type with its codes, the contract's limits, categories and
// instants. Parts with a vocabulary of their own sit just above it (ingest,
// search, httperr, exportjob); the webhook models are package webhook's. It
// runs no query and knows nothing of HTTP or GraphQL; the models carry Bun
// table tags so db reads and writes them directly.
package cryptointel

// The GraphQL schema is rendered from its template with the limits of
// limits.go before gqlgen (resolvers) reads it.
//
//go:generate go run ./graph/schemagen
