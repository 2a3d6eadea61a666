package search

import (
	_ "embed"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cryptointel/cryptointel"
)

// thesaurusText is the search thesaurus, data kept in the repository
// (thesaurus.txt; its header says how to add a term).
//
//go:embed thesaurus.txt
var thesaurusText string

// Weights of the words a query term searches for (searchAlt.Weight).
const (
	// weightTyped is the word as typed, one of its listed forms, or
	// another name of the entity it names.
	weightTyped = 1.0
	// weightSynonym is a thesaurus synonym: lower than the word typed, so
	// the events that use the typed word rank first.
	weightSynonym = 0.4
)

// maxTermAlternatives bounds the words one query term searches for (the
// typed word, its forms and synonyms, an entity's names).
const maxTermAlternatives = 12

// thesaurus maps a normalized word or phrase (thesaurusKey) to the groups
// it belongs to.
type thesaurus struct {
	// groups are the synonym groups, members as written.
	groups [][]string
	// byKey lists, for each member's key, the groups it belongs to.
	byKey map[string][]int
	// forms maps the key of an irregular form to its group's first form,
	// the key every form of the word is looked up by.
	forms map[string]string
	// formGroups maps that first form's key to every form.
	formGroups map[string][]string
	// longest is the most words a member has.
	longest int
}

// searchThesaurus is the parsed thesaurus.
var searchThesaurus = mustParseThesaurus(thesaurusText)

// mustParseThesaurus parses the thesaurus text; a malformed file is a
// programming error caught by every test and at start.
func mustParseThesaurus(text string) *thesaurus {
	t, err := parseThesaurus(text)
	if err != nil {
		panic(err)
	}
	return t
}

// parseThesaurus reads lines of comma-separated members; "=" lines list
// the forms of one word, "#" lines are comments.
func parseThesaurus(text string) (*thesaurus, error) {
	t := &thesaurus{byKey: map[string][]int{}, forms: map[string]string{}, formGroups: map[string][]string{}, longest: 1}
	// Form lines first: a group's members are keyed with every form
	// known, as queries are ("stolen funds" is keyed "steal fund" wherever
	// the form line stands).
	lines := strings.Split(text, "\n")
	for _, formPass := range []bool{true, false} {
		if err := t.parseLines(lines, formPass); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// parseLines reads the form lines of lines (formPass) or their groups.
func (t *thesaurus) parseLines(lines []string, formPass bool) error {
	for n, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		forms := strings.HasPrefix(line, "=")
		if forms != formPass {
			continue
		}
		line = strings.TrimPrefix(line, "=")
		var members []string
		for _, m := range strings.Split(line, ",") {
			if m = strings.Join(strings.Fields(m), " "); m != "" {
				members = append(members, m)
			}
		}
		if len(members) < 2 {
			return fmt.Errorf("search thesaurus line %d: a group needs at least two members", n+1)
		}
		if forms {
			head := thesaurusKey(queryWords(members[0]))
			for _, m := range members {
				t.forms[thesaurusKey(queryWords(m))] = head
			}
			t.formGroups[head] = members
			continue
		}
		g := len(t.groups)
		t.groups = append(t.groups, members)
		for _, m := range members {
			words := queryWords(m)
			k := strings.Join(t.normalizeForms(words), " ")
			t.byKey[k] = append(t.byKey[k], g)
			t.longest = max(t.longest, len(words))
		}
	}
	return nil
}

// knows reports whether the thesaurus lists the single word w, as a
// member of a group or one of a word's forms: such a word is vocabulary,
// never read as a misspelt entity name.
func (t *thesaurus) knows(w string) bool {
	words := queryWords(w)
	if len(words) != 1 {
		return false
	}
	k := strings.Join(t.normalizeForms(words), " ")
	_, form := t.formGroups[k]
	return len(t.byKey[k]) > 0 || form
}

// normalizeForms replaces each irregular form among words by its group's
// first form.
func (t *thesaurus) normalizeForms(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		k := wordKey(w)
		if head, ok := t.forms[k]; ok {
			out[i] = head
		} else {
			out[i] = k
		}
	}
	return out
}

// wordKey is how the thesaurus compares words: lower case, without a
// possessive and one common English ending, so "hacked", "hacks" and
// "hack" meet (the database's stemmer does the real work on the text; this
// only finds the group).
func wordKey(w string) string {
	w = strings.ToLower(w)
	w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
	for _, suf := range []string{"ing", "ed", "es", "s", "e"} {
		if len(w)-len(suf) >= 3 && strings.HasSuffix(w, suf) && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-len(suf)]
			break
		}
	}
	if n := len(w); n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiou", rune(w[n-1])) {
		w = w[:n-1]
	}
	return w
}

// thesaurusKey joins the keys of words.
func thesaurusKey(words []string) string {
	keys := make([]string, len(words))
	for i, w := range words {
		keys[i] = wordKey(w)
	}
	return strings.Join(keys, " ")
}

// searchAlt is a word or phrase a query term searches for.
type searchAlt struct {
	// Text is the word or phrase; the database stems it.
	Text string
	// Weight is weightTyped or weightSynonym.
	Weight float64
}

// searchTerm is one term of a query: a word, or the words of a thesaurus
// phrase ("went down"), with what it searches for.
type searchTerm struct {
	// Text is the term as typed.
	Text string
	// Words are its query words (index range in searchQuery.Words).
	First, Last int
	// Alts are the words and phrases it searches for, the typed text
	// first; entity names join after linking.
	Alts []searchAlt
}

// searchQuery is a query read for search.
type searchQuery struct {
	// Text is the cleaned query.
	Text string
	// Words are its words in order.
	Words []string
	// Terms are its terms in order.
	Terms []searchTerm
	// Read is what was read off the query before its words were searched:
	// time expressions, question words, a category preference.
	Read queryReading
	// Whole is the text the whole query is linked to entities by: the
	// query, or its words searched when some were read off.
	Whole string
}

// queryWordSeparators split a query into words: space and the operator and
// punctuation characters of query syntaxes. Characters inside names
// ("ether.fi", "layer-2", "a16z", "$SOL") stay.
const queryWordSeparators = `,;:!?"()[]{}<>&|*~^+=\/@#%` + "`"

// queryWords splits s into words (see queryWordSeparators), trimming
// punctuation at their ends.
func queryWords(s string) []string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return queryWordsUnicode(s)
		}
	}
	// ASCII (nearly every title and query): the same words, byte by byte.
	out := make([]string, 0, 8)
	for i := 0; i < len(s); {
		for i < len(s) && asciiSeparator[s[i]] {
			i++
		}
		j := i
		for j < len(s) && !asciiSeparator[s[j]] {
			j++
		}
		a, b := i, j
		for a < b && !asciiLetterOrDigit[s[a]] {
			a++
		}
		for b > a && !asciiLetterOrDigit[s[b-1]] {
			b--
		}
		if a < b {
			out = append(out, s[a:b])
		}
		i = j
	}
	return out
}

// asciiSeparator and asciiLetterOrDigit are queryWordsUnicode's tests of an
// ASCII character.
var asciiSeparator, asciiLetterOrDigit = func() (sep, alnum [utf8.RuneSelf]bool) {
	for c := range rune(utf8.RuneSelf) {
		sep[c] = isQueryWordSeparator(c)
		alnum[c] = unicode.IsLetter(c) || unicode.IsDigit(c)
	}
	return sep, alnum
}()

// isQueryWordSeparator reports whether r separates a query's words.
func isQueryWordSeparator(r rune) bool {
	return unicode.IsSpace(r) || strings.ContainsRune(queryWordSeparators, r) || unicode.IsControl(r)
}

// queryWordsUnicode is queryWords of any text.
func queryWordsUnicode(s string) []string {
	raw := strings.FieldsFunc(s, isQueryWordSeparator)
	out := raw[:0]
	for _, w := range raw {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// parseSearchQuery reads query: it must hold a searchable word and stay
// within cryptointel.SearchQueryMaxRunes and SearchQueryMaxWords. Terms
// group the words into thesaurus phrases (longest match first) and carry
// each term's forms and synonyms.
//
// Returns EINVALID for an empty, too long or wordless query.
func parseSearchQuery(query string) (*searchQuery, error) {
	query = strings.TrimSpace(strings.ToValidUTF8(strings.ReplaceAll(query, "\x00", ""), ""))
	if query == "" {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: MsgQueryRequired}
	}
	if utf8.RuneCountInString(query) > cryptointel.SearchQueryMaxRunes {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: MsgQueryTooLong}
	}
	words := queryWords(query)
	if len(words) == 0 {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: MsgQueryNoWords}
	}
	if len(words) > cryptointel.SearchQueryMaxWords {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: MsgQueryTooManyWords}
	}
	kept, read := readQuery(words)
	if len(kept) == 0 {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: MsgQueryOnlyTimeWords}
	}
	q := &searchQuery{Text: query, Words: kept, Read: read, Whole: query}
	if len(kept) < len(words) {
		q.Whole = strings.Join(kept, " ")
	}
	words = kept
	th := searchThesaurus
	norm := th.normalizeForms(words)
	for i := 0; i < len(words); {
		n := 1
		var groups []int
		for size := min(th.longest, len(words)-i); size >= 1; size-- {
			if g, ok := th.byKey[strings.Join(norm[i:i+size], " ")]; ok {
				n, groups = size, g
				break
			}
		}
		text := strings.Join(words[i:i+n], " ")
		t := searchTerm{Text: text, First: i, Last: i + n - 1}
		seen := map[string]bool{}
		add := func(s string, w float64) {
			if k := strings.ToLower(s); !seen[k] && len(t.Alts) < maxTermAlternatives {
				seen[k] = true
				t.Alts = append(t.Alts, searchAlt{Text: s, Weight: w})
			}
		}
		add(text, weightTyped)
		if n == 1 {
			for _, f := range th.formGroups[norm[i]] {
				add(f, weightTyped)
			}
		}
		for _, g := range groups {
			for _, m := range th.groups[g] {
				add(m, weightSynonym)
			}
		}
		q.Terms = append(q.Terms, t)
		i += n
	}
	return q, nil
}

// phrases returns every run of up to maxPhraseTokens consecutive words but
// the whole query (entity linking matches them against names), with the
// word range each covers.
func (q *searchQuery) phrases() (texts []string, first, last []int) {
	words := q.Words[:min(len(q.Words), maxQueryTokens)]
	seen := map[string]bool{strings.ToLower(strings.Join(q.Words, " ")): true}
	for size := min(maxPhraseTokens, len(words)); size >= 1; size-- {
		for i := 0; i+size <= len(words); i++ {
			p := strings.Join(words[i:i+size], " ")
			if k := strings.ToLower(p); !seen[k] {
				seen[k] = true
				texts = append(texts, p)
				first, last = append(first, i), append(last, i+size-1)
			}
		}
	}
	return texts, first, last
}

// termMask returns the bit mask of the terms covering any word in
// [first, last].
func (q *searchQuery) termMask(first, last int) int64 {
	var m int64
	for i, t := range q.Terms {
		if t.Last >= first && t.First <= last {
			m |= 1 << i
		}
	}
	return m
}

// topicTSQuery returns the SQL expression of the tsquery a feed's topic
// filters by, adding its arguments with add (which returns each one's
// placeholder): the topic is read as a search
// query is (parseSearchQuery), and an event must match every term, each
// term by the word typed, its forms, its thesaurus synonyms or another name
// of an entity it names exactly. It is NULL (no event matches) when the
// topic has only stop words.
//
// Returns EINVALID when the topic is too long, has too many words or none.
func topicTSQuery(add func(v any) string, topic string) (string, error) {
	sq, err := parseSearchQuery(topic)
	if err != nil {
		return "", err
	}
	var (
		alts  []string
		terms []int32
		typed []bool
		words []int32
	)
	for i, t := range sq.Terms {
		for _, alt := range t.Alts {
			alts, terms, typed = append(alts, alt.Text), append(terms, int32(i)), append(typed, alt.Weight == weightTyped)
			words = append(words, int32(multiLetterWords(alt.Text)))
		}
	}
	as, ts, ty, ws := add(alts), add(terms), add(typed), add(words)
	// Synonyms join a term only when its typed words are rare (as in
	// search's probes): each is one more posting list to read. A synonym
	// phrase that the stemmer cuts to fewer words than it has ("goes
	// down" without its stop word "down") is not searched, as in search
	// (lostToStopWords): it would find every event that "goes live".
	return `(SELECT string_agg('(' || x.q || ')', ' & ')::tsquery FROM (
			SELECT y.t, string_agg(DISTINCT '(' || y.q || ')', ' | ') AS q FROM (
				SELECT u.t, phraseto_tsquery('english', u.a)::text AS q
				FROM unnest(` + as + `::text[], ` + ts + `::int[], ` + ty + `::bool[], ` + ws + `::int[]) AS u(a, t, typed, w)
				WHERE u.typed OR (length(to_tsvector('english', u.a)) >= least(u.w, 2) AND (
					SELECT coalesce(sum((SELECT st.df FROM search_terms st WHERE st.term = x)), 0)
					FROM unnest(` + as + `::text[], ` + ts + `::int[], ` + ty + `::bool[]) AS v(a, t, typed),
					     unnest(tsvector_to_array(to_tsvector('english', v.a))) AS x
					WHERE v.t = u.t AND v.typed) < ` + fmt.Sprint(plainMaxMatches) + `)
				UNION
				SELECT u.t, phraseto_tsquery('english', n2.value)::text
				FROM unnest(` + as + `::text[], ` + ts + `::int[], ` + ty + `::bool[]) AS u(a, t, typed)
				JOIN entity_names n1 ON n1.norm = norm_text(u.a)
				JOIN entity_names n2 ON n2.entity_id = n1.entity_id AND n2.kind <> 'display_name'
				WHERE u.typed
			) y WHERE y.q <> '' GROUP BY y.t
		) x)`, nil
}

// multiLetterWords counts the words of s longer than one letter: a phrase
// of two or more keeps its meaning only while the stemmer keeps two words
// of it (a dropped single letter names a class: "series a").
func multiLetterWords(s string) int {
	n := 0
	for _, w := range queryWords(s) {
		if utf8.RuneCountInString(w) > 1 {
			n++
		}
	}
	return n
}

// topicBucketWindow is the longest window whose topic filter names the
// window's time buckets: an hour of buckets for a window of up to
// topicHourWindow, days up to this; a longer one reads the words' matches
// whole.
const (
	topicBucketWindow = 8 * 24 * time.Hour
	topicHourWindow   = 26 * time.Hour
	// topicAhead is how far past the clock the buckets reach: ingest
	// takes evidence dated up to cryptointel.MaxPublishedAhead ahead.
	topicAhead = 2 * time.Hour
)

// TopicFilter returns the SQL condition a feed's topic adds to a statement
// over events e whose window starts at sinceAt (db's feeds, EventFilter.Topic),
// adding its arguments with add: the topic's tsquery
// (topicTSQuery) and, for a window of at most topicBucketWindow, the
// index's time buckets that cover it up to the clock (topicAhead past it),
// hours for a window of a day, days for a longer one, so the index reads
// the words' postings within the window only. A feed in recency order
// (recency) names buckets for a window of a day only: over days, walking
// the recency index and testing the words on each row finds the newest
// matches sooner than the index finds every match of the window's days
// (tests/bench/NOTES.md: 1–2 ms against 4–23 ms for a 7-day poll).
//
// Returns EINVALID when the topic is too long, has too many words or none.
func TopicFilter(add func(v any) string, topic string, sinceAt time.Time, recency bool) (string, error) {
	tsq, err := topicTSQuery(add, topic)
	if err != nil {
		return "", err
	}
	cond := "e.search @@ " + tsq
	until := time.Now()
	if until.Before(sinceAt) {
		until = sinceAt
	}
	until = until.Add(topicAhead)
	if window := until.Sub(sinceAt); window <= topicBucketWindow+topicAhead {
		level := 2
		if window <= topicHourWindow+topicAhead {
			level = 1
		} else if recency {
			return cond, nil
		}
		cond += " AND search_buckets(e.latest_evidence_at) && " + add(bucketCodes(level, sinceAt, until)) + "::int[]"
	}
	return cond, nil
}
