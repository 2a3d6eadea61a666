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

// nameMatchSQL returns the UNION ALL of the name-matching branches for the
// normalized name expression n (SQL, a constant so the planner folds it and
// picks the index for each branch), each yielding entity_id, kind, value,
// rank, match_type, sim. Exact and prefix matches use the btree on
// entity_names.norm; token, substring and fuzzy matches use the trigram GIN
// index. partial adds the token and substring branches.
func nameMatchSQL(n string, partial bool, fuzzyMin float64) string {
	kindRank := `CASE en.kind WHEN 'canonical_name' THEN 0 WHEN 'display_name' THEN 1 ELSE 2 END`
	// LIKE pattern for "starts with n", with LIKE's metacharacters escaped.
	prefix := `(replace(replace(replace(` + n + `, '\', '\\'), '%', '\%'), '_', '\_') || '%')`
	var b strings.Builder
	fmt.Fprintf(&b, `
		SELECT en.entity_id, en.kind, en.value, %s AS rank, 'exact' AS match_type, 1.0::float8 AS sim
		FROM entity_names en WHERE en.norm = %s
		UNION ALL
		SELECT en.entity_id, en.kind, en.value, 3, 'prefix', 1.0::float8
		FROM entity_names en WHERE en.norm LIKE %s AND en.norm <> %s`, kindRank, n, prefix, n)
	if partial {
		// A whole word (or run of words) of the name, not at its start:
		// "labs" finds "Uniswap Labs". Regex metacharacters are escaped.
		word := `('\m' || regexp_replace(` + n + `, '([^[:alnum:][:space:]])', '\\\1', 'g') || '\M')`
		fmt.Fprintf(&b, `
		UNION ALL
		SELECT en.entity_id, en.kind, en.value, 4, 'token', 1.0::float8
		FROM entity_names en WHERE en.norm ~ %s AND en.norm NOT LIKE %s
		UNION ALL
		SELECT en.entity_id, en.kind, en.value, 5, 'substring', 1.0::float8
		FROM entity_names en WHERE en.norm LIKE '%%' || %s AND en.norm NOT LIKE %s AND en.norm !~ %s`, word, prefix, prefix, prefix, word)
	}
	if fuzzyMin > 0 {
		// The % operator (trigram similarity above pg_trgm's threshold, 0.3
		// by default) is answered by the GIN index; the similarity is then
		// recomputed for the rank.
		fmt.Fprintf(&b, `
		UNION ALL
		SELECT f.entity_id, f.kind, f.value,
		       CASE WHEN f.sim >= 0.6 THEN 6 WHEN f.sim >= 0.45 THEN 7 ELSE 8 END, 'fuzzy', f.sim
		FROM (
			SELECT en.entity_id, en.kind, en.value, similarity(en.norm, %s)::float8 AS sim
			FROM entity_names en WHERE en.norm %% %s
		) f WHERE f.sim >= %g`, n, n, fuzzyMin)
	}
	return b.String()
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
	resolveLong  = sync.OnceValue(func() string { return buildResolveSQL(true) })
	resolveShort = sync.OnceValue(func() string { return buildResolveSQL(false) })
)

// buildResolveSQL builds ResolveSQL's text.
func buildResolveSQL(long bool) string {
	fuzzyMin := 0.0
	if long {
		fuzzyMin = fuzzyMinSimilarity
	}
	return `
		WITH q AS MATERIALIZED (SELECT norm_text($1::text) AS n), m AS (` + nameMatchSQL("(SELECT q.n FROM q)", long, fuzzyMin) + `
		), best AS (
			SELECT DISTINCT ON (m.entity_id) m.*
			FROM m
			ORDER BY m.entity_id, m.rank, m.sim DESC,
			         CASE m.kind WHEN 'canonical_name' THEN 0 WHEN 'display_name' THEN 1 ELSE 2 END, m.value
		)
		SELECT b.entity_id, b.kind, b.value, b.rank, b.match_type, b.sim, e.event_count
		FROM best b JOIN entities e ON e.id = b.entity_id
		ORDER BY b.rank, e.event_count DESC, b.entity_id
		LIMIT $2 OFFSET $3`
}
