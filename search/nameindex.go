package search

import (
	"slices"
	"strings"
	"sync"
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
	// norms is every name's Norm, in names' order, each after a zero byte
	// (which no text of PostgreSQL's holds), and starts[i] where names[i]'s
	// begins in it: one search of norms finds every name that contains a
	// query (Match), instead of a test of each name. Empty when a Norm
	// holds a zero byte.
	norms  string
	starts []int32
	// marks keeps Match's counts, one per name, between lookups.
	marks sync.Pool
}

// BuildNameIndex indexes rows, every row of entity_names.
func BuildNameIndex(rows []NameRow) *NameIndex {
	x := &NameIndex{names: rows, byTrigram: make(map[string][]int32, len(rows)*4)}
	var b strings.Builder
	starts := make([]int32, len(rows))
	zero := false
	for i, r := range rows {
		for _, t := range r.Trigrams {
			x.byTrigram[t] = append(x.byTrigram[t], int32(i))
		}
		zero = zero || strings.IndexByte(r.Norm, 0) >= 0
		b.WriteByte(0)
		starts[i] = int32(b.Len())
		b.WriteString(r.Norm)
	}
	if !zero {
		x.norms, x.starts = b.String(), starts
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
	// marks holds, for a long name, each name's count of trigrams shared
	// with it, and containsMark on the names that contain it (which the
	// exact, prefix, token and substring matches all do), when the index
	// can find those at once (norms).
	var (
		marks []int32
		qn    int
		found bool
	)
	if long {
		q := asciiTrigrams(n)
		qn = len(q)
		mp, _ := x.marks.Get().(*[]int32)
		if mp == nil {
			m := make([]int32, len(x.names))
			mp = &m
		} else {
			clear(*mp)
		}
		defer x.marks.Put(mp)
		marks = *mp
		for _, t := range q {
			for _, i := range x.byTrigram[t] {
				marks[i]++
			}
		}
		found = x.markContaining(n, marks)
	}
	best := map[int64]int{}
	var out []NameCandidate
	for i := range x.names {
		if found && marks[i] == 0 {
			continue // shares no trigram with the name and does not contain it
		}
		r := &x.names[i]
		var (
			rank int
			kind string
			sim  = 1.0
			c    int32
			ok   bool
		)
		if long {
			c = marks[i] &^ containsMark
		}
		switch {
		case found && marks[i]&containsMark == 0:
			// Neither equal to, nor starting with, nor containing the
			// name: only its trigrams can match it.
			if sim, rank, ok = fuzzyRank(c, qn, len(r.Trigrams)); !ok {
				continue
			}
			kind = "fuzzy"
		case r.Norm == n:
			rank, kind = kindRank(r.Kind), "exact"
		case strings.HasPrefix(r.Norm, n):
			rank, kind = RankPrefix, "prefix"
		case !long:
			continue
		case found || strings.Contains(r.Norm, n):
			// (A name the one search found reaches this case only when it
			// contains the name: the first case took the others.)
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
			if sim, rank, ok = fuzzyRank(c, qn, len(r.Trigrams)); !ok {
				continue
			}
			kind = "fuzzy"
		}
		cand := NameCandidate{EntityMatch: EntityMatch{EntityID: r.EntityID, MatchedVia: r.Kind, MatchedValue: r.Value, MatchRank: rank, MatchType: kind}, Sim: sim, order: r.ValueOrder}
		if j, seen := best[r.EntityID]; !seen {
			best[r.EntityID] = len(out)
			out = append(out, cand)
		} else if better(cand, out[j]) {
			out[j] = cand
		}
	}
	return out, true
}

// fuzzyRank is the similarity and rank of a name of n trigrams sharing c
// with a query of qn, and false when it is no match (none shared, or too
// few): pg_trgm's similarity, shared trigrams over the union in float4
// (CALCSML), then widened as ResolveSQL's ::float8 does.
func fuzzyRank(c int32, qn, n int) (sim float64, rank int, ok bool) {
	if c == 0 {
		return 0, 0, false
	}
	sim = float64(float32(c) / float32(qn+n-int(c)))
	switch {
	case sim < fuzzyMinSimilarity:
		return 0, 0, false
	case sim >= 0.6:
		return sim, 6, true
	case sim >= 0.45:
		return sim, 7, true
	}
	return sim, 8, true
}

// containsMark marks, in Match's counts of shared trigrams, a name that
// contains the name looked up.
const containsMark = 1 << 30

// markContaining sets containsMark on marks[i] for each name i whose Norm
// contains n, found by one search of norms where testing each name costs
// a comparison a name. It reports false, marking nothing, when the index
// cannot (a zero byte in a name or in n).
func (x *NameIndex) markContaining(n string, marks []int32) bool {
	if x.starts == nil || strings.IndexByte(n, 0) >= 0 {
		return false
	}
	for from := 0; ; {
		k := strings.Index(x.norms[from:], n)
		if k < 0 {
			return true
		}
		k += from
		// The name the occurrence is in: the last that starts at or
		// before it (an occurrence never spans the zero byte between
		// two names).
		i, at := slices.BinarySearch(x.starts, int32(k))
		if !at {
			i--
		}
		marks[i] |= containsMark
		from = int(x.starts[i]) + len(x.names[i].Norm)
	}
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
