// Package queries holds the GraphQL documents that the load harness
// (tests/bench) and the in-process tests (tests: the differential test and
// BenchmarkComputedRead) both send, so each is written once.
package queries

// ThreeHop is the /graphql 3-hop document: entity → relationships →
// related entity → events (with owners, participants and evidence), $n
// items per level (25 events in all at $n = 5). Its text is not one of the
// /v1 operations, so the service runs it as any client's new query:
// parsed, validated and executed by the generated executor, not compiled.
const ThreeHop = `query ThreeHop($id: Int!, $n: Int) {
  entity(id: $id) {
    id
    canonicalName
    relationships(first: $n) {
      direction
      relationshipType
      relatedEntity {
        id
        label
        events(first: $n) {
          nodes {
            id title significance latestEvidenceTimestamp
            owners { id label aliases }
            participants { id label }
            evidence { id url timestamp }
          }
          nextCursor
        }
      }
    }
  }
}`

// Latest25 is the /graphql document of the 25 latest events with their
// owners and evidence (the load harness's pair with PostGraphile 5).
const Latest25 = `query Latest25 {
  events(first: 25, sort: RECENCY, window: "30d") {
    nodes {
      id title latestEvidenceTimestamp significance
      owners { id label }
      evidence { id url timestamp }
    }
  }
}`
