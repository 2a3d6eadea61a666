package search

import (
	"strings"
)

// NameRow is one row of entity_names as a NameIndex keeps it.
type NameRow struct {
	EntityID int64
	// Kind is canonical_name, display_name or alias.
	Kind string
	// Value is the name as stored; Norm is norm_text(Value), as stored.
	Value, Norm string
	// Trigrams are pg_trgm's trigrams of Norm (show_trgm), so that a
	// name's similarity is counted over exactly the trigrams PostgreSQL
	// counts, whatever characters it holds.
	Trigrams []string
	// ValueOrder is Value's place in the database's collation order
	// (dense_rank() over value): the last tie-break between two names of
	// one entity, as ResolveSQL's ORDER BY m.value breaks it.
	ValueOrder int
}

// NameIndex answers name resolution in memory: the matches ResolveSQL
// finds in entity_names, each entity's best one, found by the same tests
// over the same rows (the names' normalized forms and trigrams as
// PostgreSQL computed them), without the statement's index scans and
// similarity computations (0.4–2 ms of PostgreSQL CPU a lookup). It is
// built from every row of entity_names (BuildNameIndex) and never
// changes; a store keeps one per content version. Only the ranking by
// popularity is left to a statement, since every ingested event changes
// it.
//
// It answers names made only of ASCII characters, whose folding
// (norm_text: lower(unaccent(name))) is ASCII lower case — unaccent
// leaves ASCII alone — and whose trigrams pg_trgm builds from ASCII
// letters and digits; Match reports false for any other name, and for a
// name whose whole-word test would depend on how the database's locale
// classes a character outside ASCII, so that the caller runs the
// statement instead.
type NameIndex struct {
	names []NameRow
	// byTrigram lists, for each trigram, the names (indexes in names)
	// that have it.
	byTrigram map[string][]int32
}

// BuildNameIndex indexes rows, every row of entity_names.
func BuildNameIndex(rows []NameRow) *NameIndex {
	x := &NameIndex{names: rows, byTrigram: make(map[string][]int32, len(rows)*4)}
	for i, r := range rows {
		for _, t := range r.Trigrams {
			x.byTrigram[t] = append(x.byTrigram[t], int32(i))
		}
	}
	return x
}

// NameCandidate is an entity's best match of a name, before the ranking by
// popularity (EntityMatch less Popularity), with the similarity it was
// ranked by.
type NameCandidate struct {
	EntityMatch
	Sim float64
	// order is the matched name's ValueOrder.
	order int
}

// Match returns each entity's best match of name (cleaned, non-empty:
// CleanName), as ResolveSQL's best CTE has them: the same match kinds,
// ranks, similarities and, within an entity, the same choice of name. Their
// order is unspecified; ResolveSQL's order also needs each entity's
// popularity. It reports false when the index cannot answer name exactly
// (see NameIndex).
func (x *NameIndex) Match(name string) ([]NameCandidate, bool) {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return nil, false
		}
	}
	n := strings.ToLower(name)
	long := len(n) >= MinFuzzyRunes
	var (
		shared []int32
		qn     int
	)
	if long {
		q := asciiTrigrams(n)
		qn = len(q)
		shared = make([]int32, len(x.names))
		for _, t := range q {
			for _, i := range x.byTrigram[t] {
				shared[i]++
			}
		}
	}
	best := map[int64]int{}
	var out []NameCandidate
	for i := range x.names {
		r := &x.names[i]
		var (
			rank int
			kind string
			sim  = 1.0
		)
		switch {
		case r.Norm == n:
			rank, kind = kindRank(r.Kind), "exact"
		case strings.HasPrefix(r.Norm, n):
			rank, kind = RankPrefix, "prefix"
		case !long:
			continue
		case strings.Contains(r.Norm, n):
			word, ok := wholeWord(r.Norm, n)
			if !ok {
				return nil, false
			}
			if word {
				rank, kind = RankToken, "token"
			} else {
				rank, kind = RankSubstring, "substring"
			}
		default:
			c := shared[i]
			if c == 0 {
				continue
			}
			// pg_trgm's similarity: shared trigrams over the union, in
			// float4 (CALCSML), then widened as ResolveSQL's ::float8 does.
			sim = float64(float32(c) / float32(qn+len(r.Trigrams)-int(c)))
			if sim < fuzzyMinSimilarity {
				continue
			}
			kind = "fuzzy"
			switch {
			case sim >= 0.6:
				rank = 6
			case sim >= 0.45:
				rank = 7
			default:
				rank = 8
			}
		}
		c := NameCandidate{EntityMatch: EntityMatch{EntityID: r.EntityID, MatchedVia: r.Kind, MatchedValue: r.Value, MatchRank: rank, MatchType: kind}, Sim: sim, order: r.ValueOrder}
		j, seen := best[r.EntityID]
		if !seen {
			best[r.EntityID] = len(out)
			out = append(out, c)
			continue
		}
		if better(c, out[j]) {
			out[j] = c
		}
	}
	return out, true
}

// better reports whether c is a better match for its entity than b, as
// ResolveSQL's DISTINCT ON keeps the first by rank, similarity descending,
// kind of name, then value.
func better(c, b NameCandidate) bool {
	if c.MatchRank != b.MatchRank {
		return c.MatchRank < b.MatchRank
	}
	if c.Sim != b.Sim {
		return c.Sim > b.Sim
	}
	if kc, kb := kindRank(c.MatchedVia), kindRank(b.MatchedVia); kc != kb {
		return kc < kb
	}
	return c.order < b.order
}

// kindRank is matchKindRank: an exact match's rank by the kind of name.
func kindRank(kind string) int {
	switch kind {
	case "canonical_name":
		return 0
	case "display_name":
		return 1
	}
	return 2
}

// asciiTrigrams are pg_trgm's trigrams of s (lower-case ASCII), unique:
// each run of letters and digits padded with two spaces before and one
// after, every three characters of it.
func asciiTrigrams(s string) []string {
	seen := map[string]bool{}
	var out []string
	for i := 0; i < len(s); {
		if !isAlnum(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
		w := "  " + s[i:j] + " "
		for k := 0; k+3 <= len(w); k++ {
			if t := w[k : k+3]; !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
		i = j
	}
	return out
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// wholeWord reports whether n (ASCII) occurs in norm as a whole word or
// run of words, as wordPattern's regex (\m n \M) tests it: at a place where
// n begins with a word character (a letter, a digit or _) that no word
// character precedes, and ends with one that no word character follows.
// ok is false when the answer depends on a character outside ASCII next
// to an occurrence, which the database's locale classes.
func wholeWord(norm, n string) (word, ok bool) {
	if !isWordByte(n[0]) || !isWordByte(n[len(n)-1]) {
		return false, true
	}
	for from := 0; ; {
		i := strings.Index(norm[from:], n)
		if i < 0 {
			return false, true
		}
		i += from
		end := i + len(n)
		before := i == 0 || !isWordByte(norm[i-1])
		after := end == len(norm) || !isWordByte(norm[end])
		if i > 0 && norm[i-1] >= 0x80 || end < len(norm) && norm[end] >= 0x80 {
			return false, false
		}
		if before && after {
			return true, true
		}
		from = i + 1
	}
}

func isWordByte(b byte) bool { return isAlnum(b) || b == '_' }
