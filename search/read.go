package search

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
)

// Reading a query before it is searched (docs/api/search.md, "Reading the
// query"): question and filler words are dropped by rule, time expressions
// become a window or a recency preference, and category words a category
// preference. What is left is searched.

// questionWords are dropped by rule, whatever their rarity: they ask, they
// do not describe what is asked about. Most are stop words too; the others
// ("show", "happened", "news") would otherwise be searched, and a rare one
// would take the query over.
var questionWords = wordSet(`which who whom whose what whats when where why how
	is are was were am be been being do does did done doing has have had having
	will would shall should can could may might must
	any anything anyone anybody some something there here
	show shows find tell give list me my i we you please
	happen happens happened happening going
	news article articles headline headlines
	about much many`)

// questionKeep are question words kept when they follow a word that
// makes them part of a phrase the thesaurus knows (list is a listings
// word: "list" after "which exchanges" is not asked for).
var questionKeepAfterVerb = wordSet(`list`)

// recencyWords read as "prefer the newest".
var recencyWords = wordSet(`recently recent lately latest newest currently`)

// whatsNew are the words before which "new" asks for the newest ("what
// is new", "what's new", "anything new"); elsewhere it is a word ("new
// listing").
var whatsNew = wordSet(`is what's whats anything something`)

// monthNames maps month words to months; "may" only after a preposition
// or before a year (it is a verb too).
var monthNames = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
	"december": 12, "dec": 12,
}

// units of rolling and calendar windows.
var timeUnits = map[string]string{
	"hour": "hour", "hours": "hour", "day": "day", "days": "day", "week": "week", "weeks": "week",
	"month": "month", "months": "month", "year": "year", "years": "year", "quarter": "quarter", "quarters": "quarter",
}

// categoryWords map a word's key (wordKey) to the event category it
// prefers: an event of that category ranks a little higher.
var categoryWords = func() map[string]string {
	out := map[string]string{}
	for cat, words := range map[string]string{
		"security":    "hack hacked exploit exploited breach drain drained heist attack stolen theft vulnerability audit",
		"listing":     "listing listed delist delisted delisting",
		"funding":     "funding raise raised fundraise round investment seed",
		"regulation":  "lawsuit sue sued enforcement regulator regulation license fine fined charges settlement",
		"governance":  "governance proposal vote voting dao referendum",
		"tokenomics":  "unlock unlocks vesting buyback burn depeg tokenomics",
		"partnership": "partnership partner integration acquisition acquire merger",
		"technology":  "outage upgrade mainnet testnet release downtime halt",
	} {
		for _, w := range strings.Fields(words) {
			out[wordKey(w)] = cat
		}
	}
	return out
}()

func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(s) {
		out[w] = true
	}
	return out
}

// timeExpr is a time expression of a query, resolved against the clock
// of each search (the analysis is kept per query, the clock moves).
type timeExpr struct {
	// Text is the expression as typed.
	Text string
	// Recency: "prefer the newest"; else resolve gives the window.
	Recency bool
	resolve func(now time.Time) (from, to time.Time)
}

// queryReading is what was read off a query before its words are
// searched.
type queryReading struct {
	Dropped  []SearchDropped
	Times    []timeExpr
	Category string
	// CategoryText is the word the category preference was read from.
	CategoryText string
}

// readQuery separates the words to search from the time expressions and
// question words of words. When nothing but question words would be left,
// they are kept (they are then the query's words: stop words, reported as
// such).
func readQuery(words []string) (kept []string, r queryReading) {
	lower := make([]string, len(words))
	for i, w := range words {
		lower[i] = strings.ToLower(w)
	}
	isTime := make([]bool, len(words))
	for i := 0; i < len(words); {
		if n, e := readTime(lower, words, i); n > 0 {
			r.Times = append(r.Times, e)
			r.Dropped = append(r.Dropped, SearchDropped{Text: e.Text, Reason: DroppedTime})
			for j := i; j < i+n; j++ {
				isTime[j] = true
			}
			i += n
			continue
		}
		i++
	}
	// A question word inside a thesaurus phrase ("going public", "ask
	// me anything") is part of what is asked about.
	inPhrase := make([]bool, len(words))
	th := searchThesaurus
	norm := th.normalizeForms(words)
	for i := range words {
		for size := min(th.longest, len(words)-i); size >= 2; size-- {
			if _, ok := th.byKey[strings.Join(norm[i:i+size], " ")]; ok {
				for j := i; j < i+size; j++ {
					inPhrase[j] = true
				}
				break
			}
		}
	}
	var question []SearchDropped
	for i, w := range words {
		switch {
		case isTime[i]:
		case questionWords[lower[i]] && !inPhrase[i] && !(questionKeepAfterVerb[lower[i]] && len(kept) > 0):
			question = append(question, SearchDropped{Text: w, Reason: DroppedQuestion})
		default:
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 && len(r.Times) == 0 {
		// Nothing but question words: they are the query.
		for i, w := range words {
			if !isTime[i] {
				kept = append(kept, w)
			}
		}
		question = nil
	}
	r.Dropped = append(r.Dropped, question...)
	for _, w := range kept {
		if c, ok := categoryWords[wordKey(w)]; ok {
			r.Category, r.CategoryText = c, w
			break
		}
	}
	return kept, r
}

// readTime reads a time expression starting at word i of lower (orig as
// typed): it returns how many words it spans (0: none).
func readTime(lower, orig []string, i int) (int, timeExpr) {
	w := lower[i]
	next := func(k int) string {
		if i+k < len(lower) {
			return lower[i+k]
		}
		return ""
	}
	text := func(n int) string { return strings.Join(orig[i:i+n], " ") }
	mk := func(n int, f func(now time.Time) (time.Time, time.Time)) (int, timeExpr) {
		return n, timeExpr{Text: text(n), resolve: f}
	}
	switch {
	case recencyWords[w]:
		return 1, timeExpr{Text: text(1), Recency: true}
	case w == "new" && i > 0 && whatsNew[lower[i-1]]:
		// "what is new with X", "anything new": the newest of X.
		return 1, timeExpr{Text: text(1), Recency: true}
	case w == "right" && next(1) == "now", w == "these" && next(1) == "days":
		return 2, timeExpr{Text: text(2), Recency: true}
	case w == "today" || w == "tonight":
		return mk(1, func(now time.Time) (time.Time, time.Time) { d := dayStart(now); return d, d.AddDate(0, 0, 1) })
	case w == "yesterday":
		return mk(1, func(now time.Time) (time.Time, time.Time) { d := dayStart(now); return d.AddDate(0, 0, -1), d })
	case w == "this" || w == "current":
		if u, ok := timeUnits[next(1)]; ok && !strings.HasSuffix(next(1), "s") {
			return mk(2, func(now time.Time) (time.Time, time.Time) { return calendar(u, now, 0) })
		}
	case w == "next" || w == "coming" || w == "upcoming":
		if u, ok := timeUnits[next(1)]; ok && !strings.HasSuffix(next(1), "s") {
			return mk(2, func(now time.Time) (time.Time, time.Time) { return calendar(u, now, 1) })
		}
		if n, err := strconv.Atoi(next(1)); err == nil && n > 0 && n <= 1000 {
			if u, ok := timeUnits[next(2)]; ok {
				return mk(3, func(now time.Time) (time.Time, time.Time) { return now, rolling(u, now, n) })
			}
		}
	case w == "last" || w == "past" || w == "previous":
		if u, ok := timeUnits[next(1)]; ok && !strings.HasSuffix(next(1), "s") {
			return mk(2, func(now time.Time) (time.Time, time.Time) { return rolling(u, now, -1), time.Time{} })
		}
		if n, err := strconv.Atoi(next(1)); err == nil && n > 0 && n <= 1000 {
			if u, ok := timeUnits[next(2)]; ok {
				return mk(3, func(now time.Time) (time.Time, time.Time) { return rolling(u, now, -n), time.Time{} })
			}
		}
	case w == "since" || w == "after" || w == "before" || w == "until" || w == "till" || w == "in" || w == "during":
		n, f := readDate(lower, i+1)
		if n == 0 {
			if w == "since" || w == "after" || w == "before" || w == "until" {
				// since yesterday, before last week…
				if i+1 >= len(lower) {
					return 0, timeExpr{}
				}
				if m, e := readTime(lower, orig, i+1); m > 0 && !e.Recency {
					n, f = m, e.resolve
				}
			}
			if n == 0 {
				return 0, timeExpr{}
			}
		}
		switch w {
		case "since", "after":
			return mk(n+1, func(now time.Time) (time.Time, time.Time) {
				from, to := f(now)
				if w == "after" {
					return to, time.Time{}
				}
				return from, time.Time{}
			})
		case "before", "until", "till":
			return mk(n+1, func(now time.Time) (time.Time, time.Time) { from, _ := f(now); return time.Time{}, from })
		default:
			return mk(n+1, f)
		}
	default:
		// "March 2025", "2025" after a month only; a bare year is a word
		// ("2025 roadmap").
		if m, ok := monthNames[w]; ok {
			if y, ok := year(next(1)); ok {
				return mk(2, func(time.Time) (time.Time, time.Time) { return monthRange(y, m) })
			}
		}
	}
	return 0, timeExpr{}
}

// readDate reads a month (with an optional year) or a year at word i; a
// month without a year is its latest occurrence that has begun.
func readDate(lower []string, i int) (int, func(now time.Time) (time.Time, time.Time)) {
	if i >= len(lower) {
		return 0, nil
	}
	if y, ok := year(lower[i]); ok {
		return 1, func(time.Time) (time.Time, time.Time) {
			return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(y+1, 1, 1, 0, 0, 0, 0, time.UTC)
		}
	}
	m, ok := monthNames[lower[i]]
	if !ok {
		return 0, nil
	}
	if i+1 < len(lower) {
		if y, ok := year(lower[i+1]); ok {
			return 2, func(time.Time) (time.Time, time.Time) { return monthRange(y, m) }
		}
	}
	return 1, func(now time.Time) (time.Time, time.Time) {
		y := now.UTC().Year()
		if m > now.UTC().Month() {
			y--
		}
		return monthRange(y, m)
	}
}

// year reads a year from 2009 (the first block) to 2100.
func year(s string) (int, bool) {
	if len(s) != 4 {
		return 0, false
	}
	y, err := strconv.Atoi(s)
	return y, err == nil && y >= 2009 && y <= 2100
}

func monthRange(y int, m time.Month) (time.Time, time.Time) {
	from := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	return from, from.AddDate(0, 1, 0)
}

func dayStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// calendar is the calendar unit holding now, shifted by k units (weeks
// start on Monday, UTC).
func calendar(unit string, now time.Time, k int) (time.Time, time.Time) {
	d := dayStart(now)
	switch unit {
	case "hour":
		h := now.UTC().Truncate(time.Hour).Add(time.Duration(k) * time.Hour)
		return h, h.Add(time.Hour)
	case "day":
		d = d.AddDate(0, 0, k)
		return d, d.AddDate(0, 0, 1)
	case "week":
		d = d.AddDate(0, 0, -((int(d.Weekday())+6)%7)+7*k)
		return d, d.AddDate(0, 0, 7)
	case "month":
		m := time.Date(d.Year(), d.Month()+time.Month(k), 1, 0, 0, 0, 0, time.UTC)
		return m, m.AddDate(0, 1, 0)
	case "quarter":
		q := time.Date(d.Year(), (d.Month()-1)/3*3+1+time.Month(3*k), 1, 0, 0, 0, 0, time.UTC)
		return q, q.AddDate(0, 3, 0)
	default:
		y := time.Date(d.Year()+k, 1, 1, 0, 0, 0, 0, time.UTC)
		return y, y.AddDate(1, 0, 0)
	}
}

// rolling is now moved by n units (negative: back).
func rolling(unit string, now time.Time, n int) time.Time {
	switch unit {
	case "hour":
		return now.Add(time.Duration(n) * time.Hour)
	case "day":
		return now.AddDate(0, 0, n)
	case "week":
		return now.AddDate(0, 0, 7*n)
	case "month":
		return now.AddDate(0, n, 0)
	case "quarter":
		return now.AddDate(0, 3*n, 0)
	default:
		return now.AddDate(n, 0, 0)
	}
}

// upcomingLookback: a window wholly in the future ("next week") asks for
// what is scheduled then, which is reported before it; the events searched
// are those of this long before the clock, newest preferred.
const upcomingLookback = 14 * 24 * time.Hour

// searchWindow is a search's window and preferences once the query's time
// words are read against the clock.
type searchWindow struct {
	since, until time.Time
	// recency: prefer the newest strongly ("recently", a future window);
	// history: the query named a past window, so no recency boost.
	recency, history bool
	// scheduledFrom and scheduledTo bound the window a query asks for
	// ahead ("next week"): a report naming a date in it ranks higher.
	scheduledFrom, scheduledTo time.Time
	filters                    []SearchFilter
}

// window reads the time expressions of r against now, within since and
// until (zero: open) from the request; defaultSince tells that since was
// not asked for, so a window the query names replaces it.
//
// Returns EINVALID when the query's window and the request's do not meet.
func (r *queryReading) window(now, since, until time.Time, defaultSince bool) (searchWindow, error) {
	w := searchWindow{since: since, until: until}
	var qFrom, qTo time.Time
	var fromText, toText []string
	for _, e := range r.Times {
		if e.Recency {
			if !w.recency {
				w.filters = append(w.filters, SearchFilter{Name: SearchFilterRecency, Value: "prefer newer", Source: SearchSourceQuery, Text: e.Text})
			}
			w.recency = true
			continue
		}
		from, to := e.resolve(now)
		if from.IsZero() || !from.After(now) {
			// A past (or current) window.
			if !from.IsZero() && from.After(qFrom) {
				qFrom, fromText = from, append(fromText, e.Text)
			}
			if !to.IsZero() && (qTo.IsZero() || to.Before(qTo)) {
				qTo, toText = to, append(toText, e.Text)
			}
			continue
		}
		// Wholly in the future: what is scheduled then was reported
		// before it.
		w.filters = append(w.filters, SearchFilter{Name: "scheduled", Value: from.Format(time.RFC3339) + "/" + to.Format(time.RFC3339),
			Source: SearchSourceQuery, Text: e.Text})
		if w.scheduledFrom.IsZero() {
			w.scheduledFrom, w.scheduledTo = from, to
		}
		if f := now.Add(-upcomingLookback); f.After(qFrom) {
			qFrom = f
			fromText = append(fromText, e.Text)
		}
		w.recency = true
	}
	if !qFrom.IsZero() {
		if defaultSince || qFrom.After(w.since) {
			w.since = qFrom
		}
		w.filters = append(w.filters, SearchFilter{Name: SearchFilterFrom, Value: qFrom.UTC().Format(time.RFC3339),
			Source: SearchSourceQuery, Text: strings.Join(fromText, ", ")})
	}
	if !qTo.IsZero() {
		if w.until.IsZero() || qTo.Before(w.until) {
			w.until = qTo
		}
		w.filters = append(w.filters, SearchFilter{Name: SearchFilterTo, Value: qTo.UTC().Format(time.RFC3339),
			Source: SearchSourceQuery, Text: strings.Join(toText, ", ")})
		w.history = !w.recency && !qTo.After(now)
	}
	if !w.until.IsZero() && !w.until.After(w.since) {
		return w, &cryptointel.Error{Code: cryptointel.EINVALID, Message: MsgSearchQueryRange}
	}
	return w, nil
}

// datePattern finds the dates a headline names ("on December 3", "for
// Nov 8", "2026-12-03").
var datePattern = regexp.MustCompile(`(?i)\b(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.? ([0-3]?[0-9])\b|\b(20[0-9][0-9])-([01][0-9])-([0-3][0-9])\b`)

// namesDateIn reports whether title names a day inside [from, to): a
// month and day is read as its next occurrence on or after a year before
// from (headlines name dates ahead without their year).
func namesDateIn(title string, from, to time.Time) bool {
	if from.IsZero() || !strings.ContainsAny(title, "0123456789") {
		return false
	}
	for _, m := range datePattern.FindAllStringSubmatch(title, -1) {
		var day time.Time
		if m[3] != "" {
			y, _ := strconv.Atoi(m[3])
			mo, _ := strconv.Atoi(m[4])
			d, _ := strconv.Atoi(m[5])
			day = time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
		} else {
			mo, ok := monthNames[strings.ToLower(m[1])]
			if !ok {
				mo = monthNames[strings.ToLower(m[1][:3])]
			}
			d, _ := strconv.Atoi(m[2])
			if mo == 0 || d < 1 || d > 31 {
				continue
			}
			y := from.Year()
			day = time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
			if day.Before(dayStart(from).AddDate(0, -6, 0)) {
				day = time.Date(y+1, mo, d, 0, 0, 0, 0, time.UTC)
			}
		}
		if !day.Before(dayStart(from)) && day.Before(to) {
			return true
		}
	}
	return false
}
