package search

import (
	"slices"
	"strings"
)

// An entity-filtered search's walk (walkSQL) tests each walked event's
// words against the probes. Each link of event_entities carries a
// signature of its event's words (migration 031): two 64-bit words in
// which each of the event's lexemes sets one bit, chosen by the low six
// bits of the lexeme's hashtext and by the six above them. A probe looks an
// event up only when its signature holds every bit of one of the probe's
// clauses: an event holding a clause's lexemes holds their bits, so no
// match is lost, and most events without them are not fetched.

// walkSignatureSlots is how many clauses a probe's signature test takes.
// A probe whose words make more clauses (many synonyms) looks up every
// event it walks, as without signatures.
const walkSignatureSlots = 8

// maxClauses bounds the clauses a tsquery expands to while it is read.
const maxClauses = 64

// SignatureSQL is a subquery giving the signature of the tsvector
// expression v as columns a and b: what lexemeBits sets, in SQL, for the
// service's statements that write links (ingest). The migrations' copies
// (search_signature and the triggers of 031) are the same formula, which
// TestSearchFilterWalkReadsSignatures and the ingest's tests compare with
// lexemeBits and with search_signature.
func SignatureSQL(v string) string {
	return `(SELECT bit_or(1::bigint << (h & 63)) AS a, bit_or(1::bigint << (h >> 6 & 63)) AS b
		FROM (SELECT hashtext(l) AS h FROM unnest(tsvector_to_array(` + v + `)) AS l) z)`
}

// lexemeBits are the bits lexeme sets in the two words of a signature
// (search_signature of migration 031).
func lexemeBits(lexeme string) (a, b int64) {
	h := hashText(lexeme)
	return int64(uint64(1) << (h & 63)), int64(uint64(1) << (h >> 6 & 63))
}

// walkSignatures are the walk's signature tests of the probes tsqs
// (walkSignatureSQL), walkSignatureSlots a probe: for each clause of a
// probe (lexemes that an event matching the probe holds all of), the bits
// its lexemes set in each word; the rest nil. A probe that allows no test
// (a clause of no lexeme: a negation, a prefix; a tsquery this reader
// does not take; more clauses than the slots) has one clause of no bits,
// which every link passes.
func walkSignatures(tsqs []*string) (a, b []*int64) {
	a, b = make([]*int64, walkSignatureSlots*len(tsqs)), make([]*int64, walkSignatureSlots*len(tsqs))
	for i, q := range tsqs {
		ca, cb := probeSignature(*q)
		for j := range ca {
			a[i*walkSignatureSlots+j], b[i*walkSignatureSlots+j] = &ca[j], &cb[j]
		}
	}
	return a, b
}

// probeSignature is the signature test of the probe tsq: its clauses'
// bits, or one clause of no bits when it allows no test.
func probeSignature(tsq string) (a, b []int64) {
	clauses, ok := tsqueryClauses(tsq)
	if ok {
		clauses = minimalClauses(clauses)
	}
	if !ok || len(clauses) == 0 || len(clauses) > walkSignatureSlots || len(clauses[0]) == 0 {
		return []int64{0}, []int64{0}
	}
	for _, c := range clauses {
		var ca, cb int64
		for _, l := range c {
			la, lb := lexemeBits(l)
			ca, cb = ca|la, cb|lb
		}
		a, b = append(a, ca), append(b, cb)
	}
	return a, b
}

// minimalClauses drops the clauses that hold another clause whole (an
// event matching them matches the smaller one) and the repeats.
func minimalClauses(cs [][]string) [][]string {
	slices.SortFunc(cs, func(x, y []string) int { return len(x) - len(y) })
	var out [][]string
	for _, c := range cs {
		held := false
		for _, o := range out {
			if subset(o, c) {
				held = true
				break
			}
		}
		if !held {
			out = append(out, c)
		}
	}
	return out
}

// subset reports whether every lexeme of small is in big (both sorted).
func subset(small, big []string) bool {
	for _, l := range small {
		if _, found := slices.BinarySearch(big, l); !found {
			return false
		}
	}
	return true
}

// tsqueryClauses reads q, a tsquery as PostgreSQL writes it, as clauses
// in disjunctive form: q matches an event only if the event holds every
// lexeme of some clause. A clause may be empty (a negation or a prefix
// match constrains no lexeme). ok is false when q is not read.
func tsqueryClauses(q string) ([][]string, bool) {
	p := tsqParser{s: q}
	cs, ok := p.or()
	p.space()
	if !ok || p.i != len(p.s) {
		return nil, false
	}
	return cs, true
}

// tsqParser reads a tsquery's text: operators by precedence | (lowest),
// &, then <-> and <N> (a phrase holds all its lexemes), then ! and
// parentheses.
type tsqParser struct {
	s string
	i int
}

func (p *tsqParser) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *tsqParser) or() ([][]string, bool) {
	cs, ok := p.and()
	for ok {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '|' {
			break
		}
		p.i++
		var r [][]string
		if r, ok = p.and(); ok {
			cs = append(cs, r...)
			ok = len(cs) <= maxClauses
		}
	}
	return cs, ok
}

func (p *tsqParser) and() ([][]string, bool) {
	cs, ok := p.unary()
	for ok {
		p.space()
		switch {
		case p.i < len(p.s) && p.s[p.i] == '&':
			p.i++
		case p.i < len(p.s) && p.s[p.i] == '<':
			j := strings.IndexByte(p.s[p.i:], '>')
			if j < 0 {
				return nil, false
			}
			p.i += j + 1
		default:
			return cs, true
		}
		var r [][]string
		if r, ok = p.unary(); ok {
			cs, ok = crossClauses(cs, r)
		}
	}
	return nil, false
}

// crossClauses is the conjunction of x and y in disjunctive form.
func crossClauses(x, y [][]string) ([][]string, bool) {
	if len(x)*len(y) > maxClauses {
		return nil, false
	}
	out := make([][]string, 0, len(x)*len(y))
	for _, a := range x {
		for _, b := range y {
			c := append(slices.Clone(a), b...)
			slices.Sort(c)
			out = append(out, slices.Compact(c))
		}
	}
	return out, true
}

func (p *tsqParser) unary() ([][]string, bool) {
	p.space()
	if p.i >= len(p.s) {
		return nil, false
	}
	switch p.s[p.i] {
	case '!':
		p.i++
		if _, ok := p.unary(); !ok {
			return nil, false
		}
		return [][]string{{}}, true
	case '(':
		p.i++
		cs, ok := p.or()
		p.space()
		if !ok || p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, false
		}
		p.i++
		return cs, true
	case '\'':
		return p.lexeme()
	}
	return nil, false
}

// lexeme reads a quoted lexeme (readQuoted) and its suffix: weights
// constrain nothing here, a prefix match (*) no lexeme.
func (p *tsqParser) lexeme() ([][]string, bool) {
	lex, next, ok := readQuoted(p.s, p.i)
	if !ok {
		return nil, false
	}
	p.i = next
	prefix := false
	if p.i < len(p.s) && p.s[p.i] == ':' {
		p.i++
		for p.i < len(p.s) && strings.IndexByte("*ABCDabcd", p.s[p.i]) >= 0 {
			prefix = prefix || p.s[p.i] == '*'
			p.i++
		}
	}
	if prefix {
		return [][]string{{}}, true
	}
	return [][]string{{lex}}, true
}

// readQuoted reads the quoted lexeme of a tsquery's text that opens at
// s[i] (a quote in it doubled, or any character after a backslash) and
// returns it and the index after its closing quote; false when it does
// not close.
func readQuoted(s string, i int) (string, int, bool) {
	var b strings.Builder
	for i++; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
			b.WriteByte('\'')
		case c == '\'':
			return b.String(), i + 1, true
		default:
			b.WriteByte(c)
		}
	}
	return "", i, false
}
