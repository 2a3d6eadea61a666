package search

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/cryptointel/cryptointel/internal/memo"
)

// Ranking happens here, in the service, over the candidates the candidate
// statement returns with their search vectors (docs/api/search.md,
// "Ranking"): PostgreSQL fetches, the service scores. The term frequency of
// an alternative is what ts_rank_cd('{0.1,0.25,0.5,1}', search, q, 0)
// returns for it (TestSearchTermFrequencyIsTsRankCD holds the two equal), so
// the statement no longer evaluates every alternative on every candidate.

// fieldWeights are the weights of a search vector's position classes D, C,
// B, A: evidence, bullets, summary, title (events_search_update, migration
// 001).
var fieldWeights = [4]float64{0.1, 0.25, 0.5, 1}

// phraseWord is a word of an alternative's tsquery: a lexeme and its
// distance from the previous word (0 for the first).
type phraseWord struct {
	lexeme string
	gap    int
}

// parsePhrase reads the tsquery text phraseto_tsquery writes: quoted
// lexemes joined by <-> or <N>. It reports false for anything else.
func parsePhrase(tsq string) ([]phraseWord, bool) {
	var out []phraseWord
	s := strings.TrimSpace(tsq)
	gap := 0
	for len(s) > 0 {
		if s[0] != '\'' {
			return nil, false
		}
		lex, next, ok := readQuoted(s, 0)
		if !ok {
			return nil, false
		}
		out = append(out, phraseWord{lexeme: lex, gap: gap})
		s = strings.TrimSpace(s[next:])
		if s == "" {
			break
		}
		switch {
		case strings.HasPrefix(s, "<->"):
			gap, s = 1, s[3:]
		case strings.HasPrefix(s, "<"):
			end := strings.IndexByte(s, '>')
			if end < 0 {
				return nil, false
			}
			if _, err := fmt.Sscanf(s[1:end], "%d", &gap); err != nil || gap < 0 {
				return nil, false
			}
			s = s[end+1:]
		default:
			return nil, false
		}
		s = strings.TrimSpace(s)
	}
	return out, len(out) > 0
}

// scoredAlt is an alternative as the scorer reads it.
type scoredAlt struct {
	term   int
	weight float64
	syn    bool
	// lex are the indexes of its words' lexemes (scorer.lexemes), gap
	// their distances from the previous word.
	lex []int
	gap []int
}

// scorer scores candidates for one analysed query.
type scorer struct {
	// lexemes maps every lexeme of the alternatives to an index.
	lexemes map[string]int
	alts    []scoredAlt
	nterms  int
}

// newScorer reads the alternatives of terms; one whose tsquery it cannot
// read (not written by phraseto_tsquery) scores nothing.
func newScorer(terms []rankedTerm) *scorer {
	s := &scorer{lexemes: map[string]int{}, nterms: len(terms)}
	for i, t := range terms {
		for _, alt := range t.Alts {
			words, ok := parsePhrase(alt.TSQ)
			if !ok {
				continue
			}
			sa := scoredAlt{term: i, weight: alt.Weight, syn: alt.Weight != weightTyped}
			for _, w := range words {
				idx, ok := s.lexemes[w.lexeme]
				if !ok {
					idx = len(s.lexemes)
					s.lexemes[w.lexeme] = idx
				}
				sa.lex = append(sa.lex, idx)
				sa.gap = append(sa.gap, w.gap)
			}
			s.alts = append(s.alts, sa)
		}
	}
	return s
}

// vectorPositions finds the query's lexemes in a search vector in binary
// form (tsvectorsend: a count, then each lexeme NUL-terminated with its
// position count and positions, two bytes each) and sets pos[i] to lexeme
// i's positions, still encoded (nil when absent; empty when the lexeme has
// no positions).
func (s *scorer) vectorPositions(vec []byte, pos [][]byte) error {
	for i := range pos {
		pos[i] = nil
	}
	if len(vec) < 4 {
		return fmt.Errorf("short search vector (%d bytes)", len(vec))
	}
	n := int(binary.BigEndian.Uint32(vec))
	b := vec[4:]
	for range n {
		end := 0
		for end < len(b) && b[end] != 0 {
			end++
		}
		if end+3 > len(b) {
			return fmt.Errorf("truncated search vector")
		}
		lex := b[:end]
		npos := int(binary.BigEndian.Uint16(b[end+1:]))
		b = b[end+3:]
		if 2*npos > len(b) {
			return fmt.Errorf("truncated search vector")
		}
		if idx, ok := s.lexemes[string(lex)]; ok {
			pos[idx] = b[: 2*npos : 2*npos]
		}
		b = b[2*npos:]
	}
	return nil
}

// textPositions is vectorPositions for a vector read in text form.
func (s *scorer) textPositions(v pgtype.TSVector, pos [][]byte) {
	for i := range pos {
		pos[i] = nil
	}
	for _, l := range v.Lexemes {
		idx, ok := s.lexemes[l.Word]
		if !ok {
			continue
		}
		enc := make([]byte, 0, 2*len(l.Positions))
		for _, p := range l.Positions {
			w := map[pgtype.TSVectorWeight]uint16{pgtype.TSVectorWeightA: 3, pgtype.TSVectorWeightB: 2, pgtype.TSVectorWeightC: 1}[p.Weight]
			enc = binary.BigEndian.AppendUint16(enc, w<<14|uint16(p.Position)&0x3fff)
		}
		pos[idx] = enc
	}
}

// altFrequency is ts_rank_cd('{0.1,0.25,0.5,1}', vector, alt, 0): for a
// word, the sum of its occurrences' field weights; for a phrase, over each
// occurrence, the harmonic mean of its words' weights divided by one plus
// the words it skips (<2> skips one).
func altFrequency(a *scoredAlt, pos [][]byte) float64 {
	first := pos[a.lex[0]]
	if first == nil {
		return 0
	}
	if len(a.lex) == 1 {
		if len(first) == 0 {
			return fieldWeights[0] // a lexeme without positions counts once, as evidence
		}
		tf := 0.0
		for j := 0; j < len(first); j += 2 {
			tf += fieldWeights[binary.BigEndian.Uint16(first[j:])>>14]
		}
		return tf
	}
	for _, l := range a.lex[1:] {
		if len(pos[l]) == 0 {
			return 0
		}
	}
	span := 0
	for _, g := range a.gap[1:] {
		span += g
	}
	tf := 0.0
	for j := 0; j < len(first); j += 2 {
		p0 := binary.BigEndian.Uint16(first[j:])
		at := int(p0 & 0x3fff)
		inv := 1 / fieldWeights[p0>>14]
		ok := true
		for k := 1; k < len(a.lex); k++ {
			at += a.gap[k]
			w, found := weightAt(pos[a.lex[k]], at)
			if !found {
				ok = false
				break
			}
			inv += 1 / w
		}
		if ok {
			n := float64(len(a.lex))
			tf += (n / inv) / float64(1+span-(len(a.lex)-1))
		}
	}
	return tf
}

// weightAt returns the field weight of position at in encoded positions
// (sorted ascending), if present.
func weightAt(enc []byte, at int) (float64, bool) {
	lo, hi := 0, len(enc)/2
	for lo < hi {
		mid := (lo + hi) / 2
		p := int(binary.BigEndian.Uint16(enc[2*mid:]) & 0x3fff)
		switch {
		case p == at:
			return fieldWeights[binary.BigEndian.Uint16(enc[2*mid:])>>14], true
		case p < at:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false
}

// candidate is an event the candidate statement returned.
type candidate struct {
	id           int64
	at           time.Time
	significance float64
	// ents are the entities the event names, entity id times two plus one
	// for an owner: owners first, each role's by id (event_entities_pkey's
	// order, which the search statement reads from the index alone, with
	// no sort), so that two events naming the same entities in the same
	// roles have equal ents whatever their positions.
	ents []int64
	// title and category, for collapsing reports of one story and the
	// facets.
	title, category string
	// tf is each term's weighted frequency, typed whether a typed word
	// (not only a synonym) of it matched.
	tf    []float64
	typed []bool
}

// rankLink is a link as the ranking reads it.
type rankLink struct {
	entityID int64
	band     string
	mask     int64
	strength float64
	typ      string
}

// bandLink is a candidate's strongest link of one band.
type bandLink struct {
	ok       bool
	entityID int64
	s        float64
	typ      string
}

// scoredCandidate is a candidate with its score and how it matched.
type scoredCandidate struct {
	c                   *candidate
	score               float64
	textpart, linkpart  float64
	typed               bool
	matched             int64
	whole, related, prt bandLink
	tier                int
	nth                 int
}

// rank scores the candidates and returns the page — BM25 over the terms
// (a term also matched through an entity link), the recency and
// significance boosts, then tiers (docs/api/search.md, "Ranking") — and
// the mask of the terms its events matched.
func (a *searchAnalysis) rank(cands []*candidate, links []rankLink, ro rankOptions) rankResult {
	now := a.lastAt
	maxIDF := 1.0
	if len(a.terms) > 0 {
		maxIDF = a.terms[0].IDF
		for _, t := range a.terms[1:] {
			maxIDF = math.Max(maxIDF, t.IDF)
		}
	}
	wholeLinks := 0
	for _, l := range links {
		if l.band == bandWhole {
			wholeLinks++
		}
	}
	ls := make([]float64, len(a.terms))
	out := make([]scoredCandidate, 0, len(cands))
	for _, c := range cands {
		sc := scoredCandidate{c: c}
		for i := range ls {
			ls[i] = 0
		}
		for _, l := range links {
			s := -1.0
			for _, e := range c.ents {
				if e>>1 != l.entityID {
					continue
				}
				r := linkParticipant
				if e&1 == 1 {
					r = linkOwner
				}
				s = math.Max(s, l.strength*r)
			}
			if s < 0 {
				continue
			}
			var b *bandLink
			switch l.band {
			case bandWhole:
				b = &sc.whole
			case bandRelated:
				b = &sc.related
			default:
				b = &sc.prt
			}
			if !b.ok || s > b.s || (s == b.s && l.entityID < b.entityID) {
				*b = bandLink{ok: true, entityID: l.entityID, s: s, typ: l.typ}
			}
			if l.band != bandRelated {
				for t := range ls {
					if l.mask&(1<<t) != 0 {
						ls[t] = math.Max(ls[t], s)
					}
				}
			}
		}
		base := 0.0
		for t, term := range a.terms {
			bm := c.tf[t] / (c.tf[t] + bm25K1)
			base += term.IDF * (math.Max(bm, ls[t]) + 0.25*math.Min(bm, ls[t]))
			sc.textpart += term.IDF * bm
			sc.linkpart += term.IDF * ls[t]
			if c.typed[t] && bm > 0 {
				sc.typed = true
			}
			if bm > 0 || ls[t] > 0 {
				sc.matched |= 1 << t
			}
		}
		if base <= 0 {
			base = 0
			if sc.related.ok {
				base = sc.related.s * maxIDF
			}
		}
		if sc.whole.ok {
			base += 0.01 * sc.whole.s
		}
		sc.score = base * ro.recency(now, c.at) * (1 + significanceBoost*c.significance/10)
		if ro.category != "" && c.category == ro.category {
			sc.score *= 1 + categoryBoost
		}
		if !ro.scheduledFrom.IsZero() && namesDateIn(c.title, ro.scheduledFrom, ro.scheduledTo) {
			sc.score *= 1 + scheduledBoost
		}
		if sc.score <= 0 {
			continue
		}
		switch {
		case sc.whole.ok, wholeLinks == 0:
			sc.tier = 0
		case sc.related.ok:
			sc.tier = 1
		default:
			sc.tier = 2
		}
		out = append(out, sc)
	}
	// Events of each entity the whole query names are numbered by score,
	// so several entities behind one name are interleaved.
	byScore := func(x, y *scoredCandidate) bool {
		if x.score != y.score {
			return x.score > y.score
		}
		if !x.c.at.Equal(y.c.at) {
			return x.c.at.After(y.c.at)
		}
		return x.c.id > y.c.id
	}
	if wholeLinks > 0 {
		idx := make([]int, 0, len(out))
		for i := range out {
			if out[i].whole.ok {
				idx = append(idx, i)
			}
		}
		sort.Slice(idx, func(x, y int) bool {
			a, b := &out[idx[x]], &out[idx[y]]
			if a.whole.entityID != b.whole.entityID {
				return a.whole.entityID < b.whole.entityID
			}
			return byScore(a, b)
		})
		for j, i := range idx {
			if j > 0 && out[idx[j-1]].whole.entityID == out[i].whole.entityID {
				out[i].nth = out[idx[j-1]].nth + 1
			} else {
				out[i].nth = 1
			}
		}
	}
	ranks := make([]float64, len(out))
	for i := range out {
		sc := &out[i]
		if sc.nth > 0 && wholeLinks > 1 {
			ranks[i] = 0.02*float64(sc.nth-1) + 0.02/(1+sc.score)
		} else {
			ranks[i] = float64(sc.tier) + 1/(1+sc.score)
		}
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(x, y int) bool {
		i, j := order[x], order[y]
		if ranks[i] != ranks[j] {
			return ranks[i] < ranks[j]
		}
		if !out[i].c.at.Equal(out[j].c.at) {
			return out[i].c.at.After(out[j].c.at)
		}
		return out[i].c.id > out[j].c.id
	})
	if ro.recencySort {
		order = a.bestNewestFirst(out, order)
	}
	var also map[int][]int64
	if ro.collapse {
		order, also = collapseStories(out, order)
	}
	res := rankResult{offset: ro.offset}
	if ro.facets {
		res.facets = facetCounts(out, order)
	}
	if ro.afterID != 0 {
		for j, i := range order {
			if out[i].c.id == ro.afterID {
				res.offset = j + 1
				break
			}
		}
	}
	res.offset = min(res.offset, len(order))
	order = order[res.offset:]
	if len(order) > ro.limit {
		order, res.more = order[:ro.limit], true
	}
	res.page = make([]EventMatch, 0, len(order))
	for _, i := range order {
		sc := &out[i]
		res.matched |= sc.matched
		m := EventMatch{EventID: sc.c.id, LatestEvidenceAt: sc.c.at.UTC(), MatchRank: ranks[i], AlsoReportedAs: also[i]}
		if m.AlsoReportedAs == nil {
			m.AlsoReportedAs = []int64{}
		}
		switch {
		case sc.whole.ok:
			m.MatchedVia, m.MatchType, m.EntityID = MatchedViaEntity, sc.whole.typ, sc.whole.entityID
		case sc.prt.ok && sc.linkpart >= sc.textpart:
			m.MatchedVia, m.MatchType, m.EntityID = MatchedViaEntity, sc.prt.typ, sc.prt.entityID
		case sc.textpart > 0:
			m.MatchedVia, m.MatchType = MatchedViaText, MatchTypeSynonym
			if sc.typed {
				m.MatchType = MatchTypeFulltext
			}
		case sc.related.ok:
			m.MatchedVia, m.MatchType, m.EntityID = MatchedViaRelatedEntity, MatchTypeExpansion, sc.related.entityID
		default:
			m.MatchedVia, m.MatchType = MatchedViaEntity, MatchTypeExact
			if sc.prt.ok {
				m.MatchType, m.EntityID = sc.prt.typ, sc.prt.entityID
			}
		}
		m.MatchedTerms = a.termTexts(sc.matched)
		res.page = append(res.page, m)
	}
	return res
}

// Ranking options beyond the plain search's.
const (
	// preferBoost and preferHalfLife: a query that asks for the newest
	// ("recently", or a window still to come) boosts an event by up to
	// +preferBoost, halving every preferHalfLife of age before the clock.
	preferBoost    = 1.0
	preferHalfLife = 7 * 24 * time.Hour
	// categoryBoost: an event of the category a query word names ("hack":
	// security) ranks this much higher.
	categoryBoost = 0.1
	// scheduledBoost: a report whose headline names a date inside the
	// window a query asks for ahead ("next week") ranks this much higher.
	scheduledBoost = 1.0
	// storyWindow: reports of one story lie at most this far apart.
	storyWindow = 48 * time.Hour
	// storyTitleSimilarity: the share of title words two reports of one
	// story (same owners) have in common. Events that name no entity are
	// never folded: nothing says they are about the same thing.
	storyTitleSimilarity = 0.5
	// storyFigureSimilarity is the share that suffices when both titles
	// hold the same figure (an amount, a count).
	storyFigureSimilarity = 0.3
	// storyCommonWords: titles sharing fewer words (the owner and a topic
	// word: "Solana outage ends", "Solana outage hits payments") tell
	// stories too short to be known for the same.
	storyCommonWords = 3
)

// rankOptions are how a ranking is cut and ordered.
type rankOptions struct {
	limit, offset int
	afterID       int64
	recencySort   bool
	// now is the request's clock; preferNewer and history come from the
	// query's time words.
	now                  time.Time
	preferNewer, history bool
	category             string
	collapse, facets     bool
	// scheduledFrom and scheduledTo: the window the query asks for ahead.
	scheduledFrom, scheduledTo time.Time
}

// recency is the recency factor of an event at at: the plain boost (up to
// +recencyBoost, relative to the newest event), none when the query named
// a past window, a strong one when it asked for the newest.
func (ro rankOptions) recency(newest, at time.Time) float64 {
	switch {
	case ro.history:
		return 1
	case ro.preferNewer:
		age := math.Max(ro.now.Sub(at).Seconds(), 0)
		return 1 + preferBoost*math.Pow(0.5, age/preferHalfLife.Seconds())
	default:
		return 1 + recencyBoost*math.Pow(0.5, newest.Sub(at).Seconds()/recencyHalfLife.Seconds())
	}
}

// rankResult is a ranked page.
type rankResult struct {
	page []EventMatch
	// matched is the mask of the terms the page matched.
	matched int64
	offset  int
	more    bool
	facets  *SearchFacets
}

// bestNewestFirst keeps, of the ranking order, the events that match as
// much of the query as the best match does (the sum of the IDF of the
// terms they match, by text or entity), newest first.
func (a *searchAnalysis) bestNewestFirst(out []scoredCandidate, order []int) []int {
	coverage := func(sc *scoredCandidate) float64 {
		c := 0.0
		for t, term := range a.terms {
			if sc.matched&(1<<t) != 0 {
				c += term.IDF
			}
		}
		return c
	}
	best := 0.0
	for _, i := range order {
		best = math.Max(best, coverage(&out[i]))
	}
	kept := make([]int, 0, len(order))
	for _, i := range order {
		if coverage(&out[i]) >= best*(1-1e-9) {
			kept = append(kept, i)
		}
	}
	sort.SliceStable(kept, func(x, y int) bool {
		i, j := &out[kept[x]], &out[kept[y]]
		if !i.c.at.Equal(j.c.at) {
			return i.c.at.After(j.c.at)
		}
		return i.c.id > j.c.id
	})
	return kept
}

// collapseStories folds the reports of one story into the best-ranked of
// them: the same owners and participants (at least one), at most storyWindow apart, and
// titles sharing storyTitleSimilarity of their words. It returns the order
// without the folded reports and, for each hit kept, the ids folded into
// it.
func collapseStories(out []scoredCandidate, order []int) ([]int, map[int][]int64) {
	// A title's keys are computed once, and only for a report that a hit
	// kept before it may share a story with by the cheap tests (time apart,
	// the same entities).
	keys := make([][]string, len(out))
	keysOf := func(i int) []string {
		if keys[i] == nil {
			keys[i] = titleKeys(out[i].c.title)
		}
		return keys[i]
	}
	kept := make([]int, 0, len(order))
	var also map[int][]int64
	for _, i := range order {
		folded := false
		for _, k := range kept {
			if mayBeSameStory(out[k].c, out[i].c) && sameTitle(keysOf(k), keysOf(i)) {
				if also == nil {
					also = map[int][]int64{}
				}
				also[k] = append(also[k], out[i].c.id)
				folded = true
				break
			}
		}
		if !folded {
			kept = append(kept, i)
		}
	}
	return kept, also
}

// mayBeSameStory reports whether x and y may tell the same story by what
// they are about: the same owners and participants (at least one), at most
// storyWindow apart. sameTitle then compares their titles.
func mayBeSameStory(x, y *candidate) bool {
	d := x.at.Sub(y.at)
	if d < 0 {
		d = -d
	}
	if d > storyWindow || len(x.ents) == 0 || len(x.ents) != len(y.ents) {
		return false
	}
	for j := range x.ents {
		if x.ents[j] != y.ents[j] {
			return false
		}
	}
	return true
}

// sameTitle reports whether two titles, by their keys kx and ky (sorted,
// each once: titleKeys), tell one story (of two reports mayBeSameStory
// pairs).
func sameTitle(kx, ky []string) bool {
	if len(kx) == 0 || len(ky) == 0 {
		return false
	}
	common, figure := 0, false
	for i, j := 0, 0; i < len(kx) && j < len(ky); {
		switch c := strings.Compare(kx[i], ky[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			common++
			figure = figure || strings.ContainsAny(kx[i], "0123456789")
			i, j = i+1, j+1
		}
	}
	if common < storyCommonWords {
		return false
	}
	sim := float64(common) / float64(len(kx)+len(ky)-common)
	// The same figure ("$106M") in both titles is strong evidence: sources
	// repeat the amount in their own words.
	return sim >= storyTitleSimilarity || figure && sim >= storyFigureSimilarity
}

// titleStopWords are left out of a title's words when reports are
// compared.
var titleStopWords = wordSet(`a an the of to in on for and or as at by with from after its it is are be new`)

// titleKeys are the words of a title as reports are compared, sorted, each
// once: keyed as the thesaurus keys them (wordKey, irregular forms to their
// first), a word of a synonym group keyed by the group (sources tell one
// story in their own words: "drains", "hacked" and "steal" are one key),
// stop words left out.
func titleKeys(title string) []string {
	words := queryWords(title)
	out := words[:0]
	for _, w := range words {
		if k := keptTitleWordKey(&titleWordKeys, w); k != "" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// titleWordKey is a title word's key as titleKeys reads it, "" for a stop
// word.
func titleWordKey(w string) string {
	lw := strings.ToLower(w)
	if titleStopWords[lw] {
		return ""
	}
	th := searchThesaurus
	k := th.normalizeForms([]string{lw})[0]
	if gs := th.byKey[k]; len(gs) > 0 {
		k = "\x00" + strconv.Itoa(slices.Min(gs))
	}
	return k
}

// titleWordKeys keeps each title word's key: titles are written in a
// vocabulary far smaller than their number, and every search compares the
// titles of its candidates. Titles, not clients, bring new words; past
// the bound a word's key is computed and not kept.
var titleWordKeys = memo.Bounded[string, string]{Max: 1 << 16}

// keptTitleWordKey is titleWordKey of w, kept in m.
func keptTitleWordKey(m *memo.Bounded[string, string], w string) string {
	if k, ok := m.Load(w); ok {
		return k
	}
	k := titleWordKey(w)
	// Copies: w and k may be parts of a title, which the memo would keep.
	m.Store(strings.Clone(w), strings.Clone(k))
	return k
}

// facetCounts counts the ranked hits by category, entity and day.
func facetCounts(out []scoredCandidate, order []int) *SearchFacets {
	cats, ents, days := map[string]int{}, map[string]int{}, map[string]int{}
	for _, i := range order {
		c := out[i].c
		cats[c.category]++
		seen := map[int64]bool{}
		for _, e := range c.ents {
			if id := e >> 1; !seen[id] {
				seen[id] = true
				ents[strconv.FormatInt(id, 10)]++
			}
		}
		days[c.at.UTC().Format(time.DateOnly)]++
	}
	return &SearchFacets{Categories: facetList(cats, false), Entities: facetList(ents, false), Days: facetList(days, true)}
}

// facetList lists counts, the largest first (byValue: newest day first).
func facetList(m map[string]int, byValue bool) []SearchFacet {
	out := make([]SearchFacet, 0, len(m))
	for v, n := range m {
		out = append(out, SearchFacet{Value: v, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if byValue {
			return out[i].Value > out[j].Value
		}
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Value < out[j].Value
	})
	if len(out) > maxFacetValues {
		out = out[:maxFacetValues]
	}
	return out
}

// maxFacetValues bounds the values a facet lists.
const maxFacetValues = 20
