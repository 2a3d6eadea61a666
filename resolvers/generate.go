package resolvers

// Regenerate graph/ from schema.graphqls and gqlgen.yml (found by walking up
// from this directory). Hand-written resolvers are never touched.
//go:generate go run ../graph/gen
