package search

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

const (
	// fuzzyMinSimilarity is the trigram similarity a fuzzy name match needs.
	// It equals pg_trgm's default similarity_threshold, so the % operator
	// (which the trigram GIN index answers) selects exactly these rows.
	fuzzyMinSimilarity = 0.3
	// linkFuzzyMinSimilarity is the similarity a fuzzy match of the whole
	// search query needs to link the query to an entity.
	linkFuzzyMinSimilarity = 0.45
	// MinFuzzyRunes is the shortest name that is matched by token and by
	// trigram similarity; shorter names (tickers such as "OP") only match
	// exactly or by prefix.
	MinFuzzyRunes = 3
	// maxNameRunes bounds the name or query looked up.
	maxNameRunes = 200
)

// CleanName drops what PostgreSQL text cannot hold (NUL, invalid UTF-8),
// trims name and bounds its length.
func CleanName(name string) string {
	name = strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), "")
	name = strings.TrimSpace(name)
	if utf8.RuneCountInString(name) > maxNameRunes {
		name = string([]rune(name)[:maxNameRunes])
	}
	return name
}

// nameMatchSQL returns the UNION ALL of the exact and prefix matches of the
// normalized name expression n (SQL, a constant so the planner folds it and
// uses the btree on entity_names.norm for each branch), each yielding
// entity_id, kind, value, rank, match_type, sim. Long names also match by
// token, substring and trigram similarity (buildResolveLongSQL).
func nameMatchSQL(n string) string {
	return fmt.Sprintf(`
		SELECT en.entity_id, en.kind, en.value, %s AS rank, 'exact' AS match_type, 1.0::float8 AS sim
		FROM entity_names en WHERE en.norm = %s
		UNION ALL
		SELECT en.entity_id, en.kind, en.value, 3, 'prefix', 1.0::float8
		FROM entity_names en WHERE en.norm LIKE %s AND en.norm <> %s`, matchKindRank, n, likePrefix(n), n)
}

// ResolveSQL is db.ResolveEntities' statement ($1 the cleaned, non-empty name,
// $2 the limit, $3 the offset); long names (3+ characters) also match by
// token, substring and trigram similarity. Its text is fixed per branch
// set, so it is prepared once per connection and its generic plan answers
// every branch from the indexes (planning it per request, with the name
// written in, cost more than running it). The name is folded
// (norm_text) once, in q: written into each branch, it was folded again
// for every index condition and every row a filter tested, a third of
// the statement's CPU.
func ResolveSQL(long bool) string {
	if long {
		return resolveLong()
	}
	return resolveShort()
}

// The two texts of ResolveSQL, built once.
var (
	resolveLong  = sync.OnceValue(buildResolveLongSQL)
	resolveShort = sync.OnceValue(func() string {
		return resolveSQLAround(`WITH q AS MATERIALIZED (SELECT norm_text($1::text) AS n), m AS (` +
			nameMatchSQL("(SELECT q.n FROM q)") + `
		)`)
	})
)

// matchKindRank is the rank of an exact match by the kind of name it
// matched: canonical, then display, then alias.
const matchKindRank = `CASE en.kind WHEN 'canonical_name' THEN 0 WHEN 'display_name' THEN 1 ELSE 2 END`

// buildResolveLongSQL builds ResolveSQL(true). A long name matches five
// ways, in order of strength: exactly (ranked by the kind of name), by
// prefix, by token (a whole word or run of words, not at the start:
// "labs" finds "Uniswap Labs"), by substring, and fuzzily (trigram
// similarity of at least fuzzyMinSimilarity, ranked 6 to 8 by it). These
// were five branches, each reading an index. Every exact, prefix and token
// match of n is also a substring match (n occurs in the name), so the
// rows they find are the rows that contain n or are trigram-similar to
// it: two bitmap scans of entity_names_trgm_idx, each row then classed by
// the first test it passes, in the branches' order. The two conditions
// are two scans, UNIONed: ORed in one scan, the planner costed a
// sequential scan of every name about as cheap as the index (it takes the
// similarity test for as cheap as a comparison) and took it on some
// statistics, computing every name's similarity (3-4 ms a lookup). A
// row's class is the match DISTINCT ON would have kept of its several,
// since every substring-family rank (0 to 5) is below every fuzzy one. The token regex no longer reads the index (pg_trgm turned it
// into a trigram graph on every execution); it only tests the rows found.
// c is materialized so that each row's tests and similarity are computed
// once: inlined, the planner copied them into the sort keys and filters.
// TestResolveLongMatchesTheBranches holds the statement to the five
// branches.
func buildResolveLongSQL() string {
	return resolveSQLAround(fmt.Sprintf(`WITH q AS MATERIALIZED (
			SELECT x.n, %s AS pre, %s AS word
			FROM (SELECT norm_text($1::text) AS n) x
		), c AS MATERIALIZED (
			SELECT en.entity_id, en.kind, en.value,
			       CASE WHEN en.norm = (SELECT q.n FROM q) THEN %s
			            WHEN en.norm LIKE (SELECT q.pre FROM q) THEN 3
			            WHEN en.norm ~ (SELECT q.word FROM q) THEN 4
			            WHEN en.norm LIKE '%%' || (SELECT q.pre FROM q) THEN 5
			            ELSE 9 END AS rank,
			       CASE WHEN en.norm LIKE '%%' || (SELECT q.pre FROM q) THEN 1.0::float8
			            ELSE similarity(en.norm, (SELECT q.n FROM q))::float8 END AS sim
			FROM (
				SELECT f.entity_id, f.kind, f.value, f.norm FROM entity_names f
				WHERE f.norm LIKE '%%' || (SELECT q.pre FROM q)
				UNION
				SELECT f.entity_id, f.kind, f.value, f.norm FROM entity_names f
				WHERE f.norm %% (SELECT q.n FROM q)
			) en
		), m AS (
			SELECT c.entity_id, c.kind, c.value,
			       CASE WHEN c.rank < 9 THEN c.rank WHEN c.sim >= 0.6 THEN 6 WHEN c.sim >= 0.45 THEN 7 ELSE 8 END AS rank,
			       CASE WHEN c.rank < 3 THEN 'exact' WHEN c.rank = 3 THEN 'prefix' WHEN c.rank = 4 THEN 'token'
			            WHEN c.rank = 5 THEN 'substring' ELSE 'fuzzy' END AS match_type,
			       c.sim
			FROM c WHERE c.rank < 9 OR c.sim >= %g
		)`, likePrefix("x.n"), wordPattern("x.n"), matchKindRank, fuzzyMinSimilarity))
}

// likePrefix is the LIKE pattern "starts with n", with LIKE's
// metacharacters escaped.
func likePrefix(n string) string {
	return `(replace(replace(replace(` + n + `, '\', '\\'), '%', '\%'), '_', '\_') || '%')`
}

// wordPattern is the regex "n as a whole word (or run of words)", with
// the regex's metacharacters escaped.
func wordPattern(n string) string {
	return `('\m' || regexp_replace(` + n + `, '([^[:alnum:][:space:]])', '\\\1', 'g') || '\M')`
}

// resolveSQLAround completes ResolveSQL's text from with, the WITH list
// that ends with m, the matches (entity_id, kind, value, rank,
// match_type, sim; an entity may match several times): each entity's
// best match, strongest first, then the most events. The entity's events
// are read by its key (a nested loop over the few matches, not a hash of
// every entity).
func resolveSQLAround(with string) string {
	return `
		` + with + `, best AS (
			SELECT DISTINCT ON (m.entity_id) m.*
			FROM m
			ORDER BY m.entity_id, m.rank, m.sim DESC,
			         CASE m.kind WHEN 'canonical_name' THEN 0 WHEN 'display_name' THEN 1 ELSE 2 END, m.value
		)
		SELECT b.entity_id, b.kind, b.value, b.rank, b.match_type, b.sim, e.event_count
		FROM best b CROSS JOIN LATERAL (SELECT e.event_count FROM entities e WHERE e.id = b.entity_id) e
		ORDER BY b.rank, e.event_count DESC, b.entity_id
		LIMIT $2 OFFSET $3`
}
