package mcp

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/cryptointel/cryptointel/graph/jsonw"
	"github.com/cryptointel/cryptointel/wire"
)

// A route's body becomes a tool's structured content in one pass over its
// JSON: at detail summary, event objects lose the canonical fields the
// wire table does not mark Compact. The tools ask their routes for the
// lean event shape (legacy=false, Server.do), so events arrive without the
// legacy aliases the /v1 envelopes carry by default; an event that still
// carries them (a body from a route without that parameter) loses them
// here (the wire table names them). Everything else is copied byte for
// byte, and an event with nothing to leave out is not rewritten.
//
// The pass reads events three ways, each writing the same bytes: the
// first event of a list flat (leaner.event: its members copied without
// entering their values, each recorded for the text), the next ones
// against the first one's members (sameEvent, flat.go: names compared
// where they are expected, nothing recorded), and an object that only
// looks like an event, or holds one, by the general pass
// (leaner.members). A route called in process hands over the spans of
// its nested lists' elements (spans.go), which the pass steps over
// instead of reading them to their end.

// eventMarker is the member that makes a JSON object an event: no other
// shape of the API has a member of that name.
const eventMarker = "latestEvidenceTimestamp"

var (
	// legacyNames are the legacy aliases of the event fields.
	legacyNames = map[string]bool{}
	// fullOnly are the event fields the compact form leaves out.
	fullOnly = map[string]bool{}
)

// memberKind is what the lean pass knows of an event member by its name,
// looked up once per member (memberKinds).
type memberKind struct {
	// text is the member's place among the fields the text shows plus
	// one (textFields), 0 for none.
	text int8
	// legacy: a legacy alias; fullOnly: a field the compact form leaves
	// out.
	legacy, fullOnly bool
	// field: an event field of the wire table or its alias, whose value
	// (entity refs, evidence, strings) never holds an event.
	field bool
}

// memberKinds are the kinds of the event members the pass knows.
var memberKinds = map[string]memberKind{}

// kindsByLength are memberKinds by the length of the name, as kindOf
// looks them up: a few names of a length, compared, cost less than
// hashing each member's name.
var kindsByLength [32][]namedKind

type namedKind struct {
	name string
	kind memberKind
}

// kindOf is the kind of the event member name (the zero kind when the
// pass does not know it).
func kindOf(name []byte) memberKind {
	if len(name) < len(kindsByLength) {
		for _, k := range kindsByLength[len(name)] {
			if k.name == string(name) {
				return k.kind
			}
		}
	}
	return memberKind{}
}

func init() {
	for _, f := range wire.EventFields {
		if f.Legacy != "" {
			legacyNames[f.Legacy] = true
			memberKinds[f.Legacy] = memberKind{legacy: true, field: true}
		}
		if !f.Compact {
			fullOnly[f.Name] = true
		}
		memberKinds[f.Name] = memberKind{fullOnly: !f.Compact, field: true}
	}
	for name, k := range textFields {
		m := memberKinds[name]
		m.text = int8(k + 1)
		memberKinds[name] = m
	}
	for name, k := range memberKinds {
		if len(name) >= len(kindsByLength) {
			panic("mcp: event member name " + name + " is longer than kindsByLength holds")
		}
		kindsByLength[len(name)] = append(kindsByLength[len(name)], namedKind{name, k})
	}
	if !slices.ContainsFunc(wire.EventFields, func(f wire.Field) bool { return f.Name == eventMarker && f.Compact }) {
		panic("mcp: the event marker " + eventMarker + " must be a compact field of wire.EventFields")
	}
}

// leanBody returns the lean form of a route's JSON body (compact JSON, as
// the routes write it); a body that does not parse is returned as it is.
func leanBody(body []byte, summary bool) []byte {
	lean, _ := walk(body, summary, false)
	return lean.body
}

// leanResult is a body after the lean pass: the body, its text rendering
// when asked for and it holds events (nil otherwise), and the root
// object's members.
type leanResult struct {
	body []byte
	text []byte // escaped, the inside of a JSON string (text.go)
	// quoted is text after its opening quote, in one buffer.
	quoted []byte
	top    map[string]topMember
}

// topMember is a member of the root object: its raw value and, for a
// list, its length (-1 otherwise).
type topMember struct {
	raw   []byte
	items int
}

// count returns the number of items of the root's list name (0 when it
// is absent or not a list).
func (r leanResult) count(name string) int {
	if m, ok := r.top[name]; ok {
		return max(m.items, 0)
	}
	if r.top != nil {
		return 0
	}
	return count(r.body, name)
}

// field returns the raw value of the root's member name (nil when absent).
func (r leanResult) field(name string) []byte {
	if r.top != nil {
		return r.top[name].raw
	}
	return fieldOf(r.body, name)
}

// walk makes the lean pass over body and, with text set, renders the text
// as it goes (text.go); a body that holds no event is returned as it is,
// without text.
func walk(body []byte, summary, text bool) (leanResult, bool) {
	return walkInto(body, summary, text, nil, nil)
}

// walkInto is walk writing the text into tx's array while it fits, with
// the spans of body's nested lists' elements its route handed over
// (spans.go).
func walkInto(body []byte, summary, text bool, tx []byte, spans []jsonw.Span) (leanResult, bool) {
	untrimmed := body
	body = bytes.TrimSpace(body)
	if !hasEvents(body) {
		return leanResult{body: body}, false // no event: nothing to drop or render
	}
	if &body[0] != &untrimmed[0] {
		spans = nil // the spans count from the body's first byte
	}
	// At detail full, a body asked for in the lean shape has nothing to
	// drop: the pass reads it in place (alias) instead of copying it, and
	// starts over copying should an event have something to drop after
	// all.
	sc := scratches.Get().(*scratch)
	var last *leaner
	defer func() {
		if last != nil {
			sc.keep(last) // the room the last pass grew
		}
		scratches.Put(sc)
	}()
	for _, alias := range []bool{!summary, false} {
		l := leaner{src: body, summary: summary, text: text, top: map[string]topMember{}, alias: alias, elements: spanCursor{spans: spans}}
		sc.lend(&l)
		last = &l
		if alias {
			l.dst = body
		} else {
			l.dst = make([]byte, 0, len(body))
		}
		if text {
			// The text's opening quote first: the response takes it as it is.
			if tx == nil {
				tx = make([]byte, 0, len(body)/2)
			}
			l.tx = append(tx[:0], '"')
		}
		end, ok := l.value(0)
		if l.diverged {
			continue
		}
		if !ok || end != len(body) {
			return leanResult{body: body}, false
		}
		r := leanResult{body: l.dst[:l.n], top: l.top}
		if text && l.events > 0 {
			r.text, r.quoted = l.tx[1:], l.tx
		}
		return r, true
	}
	return leanResult{body: body}, false
}

// scratch is the room a pass keeps its bookkeeping in (the open objects'
// members, the last event's names and what to do with them, the text's
// refs and bullets, the paths), kept from one call to the next so that a
// call does not grow it again from nothing.
type scratch struct {
	spans     []memberSpan
	names     []memberName
	bounds    []memberBound
	ops       []memberOp
	refs      []labelID
	bullets   [][]byte
	path      []byte
	container []byte
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// lend gives l the scratch's room, empty.
func (sc *scratch) lend(l *leaner) {
	l.spans, l.names, l.bounds, l.ops = sc.spans[:0], sc.names[:0], sc.bounds[:0], sc.ops[:0]
	l.refs, l.bullets, l.path, l.container = sc.refs[:0], sc.bullets[:0], sc.path[:0], sc.container[:0]
}

// keep takes back the room l grew, for the next pass.
func (sc *scratch) keep(l *leaner) {
	sc.spans, sc.names, sc.bounds, sc.ops = l.spans[:0], l.names[:0], l.bounds[:0], l.ops[:0]
	sc.refs, sc.bullets, sc.path, sc.container = l.refs[:0], l.bullets[:0], l.path[:0], l.container[:0]
}

// leaner copies compact JSON from src to dst, leaving out what an event
// object's lean form drops, and, with text set, writes the text rendering
// to tx: each event as a paragraph under the path of its list, and every
// other value that holds no event as one "path: value" line.
type leaner struct {
	src, dst []byte
	// n is the length written to dst.
	n int
	// alias makes dst src itself rather than a copy (nothing dropped: the
	// bytes written are src's, at the same offsets), written up to n;
	// diverged reports a pass that found otherwise, to be made again
	// copying.
	alias, diverged bool
	summary         bool
	spans           []memberSpan // a stack of the open objects' members
	depth           int
	items           int // the length of the list value() copied last
	top             map[string]topMember

	text      bool
	tx        []byte
	refs      []labelID  // the entity refs the text of the event shows
	lists     eventLists // the lists of the event the flat pass gathered
	path      []byte     // the path of the value being copied, e.g. data.organizations[0].radar
	quiet     int        // >0 inside an object that looks like an event: no lines for its members
	events    int        // events rendered so far
	container []byte     // the list the last event rendered belongs to
	num       int        // the last event's number in it
	names     []memberName
	bounds    []memberBound // the members of the event sameEvent reads
	ops       []memberOp    // what sameEvent does with each of names
	bullets   [][]byte      // the bullets sameEvent read
	// marker and drop: the events named as names hold the marker, and
	// have members to drop (leaner.plan).
	opsMarker, opsDrop bool
	elements           spanCursor // the spans of nested lists' elements (spans.go)
}

// memberSpan is one copied member of an object: where its name is in src,
// and where the member starts and ends in dst (the comma before it
// included).
type memberSpan struct {
	nameStart, nameEnd int
	start, end         int
	items              int        // a list's length, -1 for another value (or not counted)
	kind               memberKind // an event's member's (classify)
}

// markerName is eventMarker as bytes.
var markerName = []byte(eventMarker)

// value copies the value at src[i] and returns the index after it.
func (l *leaner) value(i int) (int, bool) {
	if i >= len(l.src) || l.diverged {
		return i, false
	}
	l.items = -1
	switch c := l.src[i]; {
	case c == '{':
		return l.object(i)
	case c == '[':
		return l.array(i)
	case c == '"':
		end, ok := stringEnd(l.src, i)
		l.put(i, end)
		return end, ok
	default: // number, true, false, null
		j := i
		for j < len(l.src) && l.src[j] != ',' && l.src[j] != '}' && l.src[j] != ']' {
			j++
		}
		l.put(i, j)
		return j, j > i
	}
}

// array copies the array at src[i].
func (l *leaner) array(i int) (int, bool) {
	l.putByte('[')
	i++
	if i < len(l.src) && l.src[i] == ']' {
		l.putByte(']')
		l.items = 0
		return i + 1, true
	}
	pathLen := len(l.path)
	n := 0
	for {
		if l.text {
			l.path = append(l.path, '[')
			l.path = strconv.AppendInt(l.path, int64(n), 10)
			l.path = append(l.path, ']')
		}
		var ok bool
		i, ok = l.value(i)
		l.path = l.path[:pathLen]
		n++
		if !ok || i >= len(l.src) {
			return i, false
		}
		if l.src[i] == ']' {
			l.putByte(']')
			l.items = n
			return i + 1, true
		}
		if l.src[i] != ',' {
			return i, false
		}
		l.putByte(',')
		i++
	}
}

// object copies the object at src[i], then drops the members an event
// does not keep once it knows the object is one.
func (l *leaner) object(i int) (int, bool) {
	base := len(l.spans)
	if flatEvents && l.depth > 0 && looksLikeEvent(l.src[i:]) {
		if end, ok, done := l.sameEvent(i); done {
			return end, ok
		}
		if end, ok, done := l.event(i, base); done {
			return end, ok
		}
	}
	predicted := l.text && looksLikeEvent(l.src[i:])
	if predicted {
		l.quiet++
	}
	l.depth++
	// Undone by hand, not deferred: an object is entered for every value
	// of every event, and three deferred closures each time showed.
	end, ok := l.members(i, base)
	l.depth--
	if predicted {
		l.quiet--
	}
	l.spans = l.spans[:base]
	return end, ok
}

// members copies the object at src[i] for object, base being where its
// members' spans start.
func (l *leaner) members(i, base int) (int, bool) {
	start, mark := l.n, len(l.tx)
	l.putByte('{')
	i++
	if i < len(l.src) && l.src[i] == '}' {
		l.putByte('}')
		return i + 1, true
	}
	event := false
	for {
		if i >= len(l.src) || l.src[i] != '"' {
			return i, false
		}
		keyEnd, ok := stringEnd(l.src, i)
		if !ok || keyEnd >= len(l.src) || l.src[keyEnd] != ':' {
			return i, false
		}
		s := memberSpan{nameStart: i + 1, nameEnd: keyEnd - 1, start: l.n}
		if len(l.spans) > base {
			s.start-- // the comma before it
		}
		name := l.src[s.nameStart:s.nameEnd]
		event = event || bytes.Equal(name, markerName)
		l.put(i, keyEnd+1)
		pathLen, lineMark, eventsBefore, valueStart := len(l.path), len(l.tx), l.events, l.n
		if l.text {
			if pathLen > 0 {
				l.path = append(l.path, '.')
			}
			l.path = append(l.path, name...)
		}
		if i, ok = l.value(keyEnd + 1); !ok || i >= len(l.src) {
			return i, false
		}
		if l.text && l.quiet == 0 && l.events == eventsBefore {
			// No event inside: the value on one line.
			l.tx = append(append(l.tx[:lineMark], l.path...), ": "...)
			l.tx = appendValueText(l.tx, l.dst[valueStart:l.n])
			l.tx = append(l.tx, nl...)
		}
		if l.depth == 1 {
			l.top[string(name)] = topMember{raw: l.dst[valueStart:l.n:l.n], items: l.items}
		}
		l.path = l.path[:pathLen]
		s.end, s.items = l.n, l.items
		l.spans = append(l.spans, s)
		if l.src[i] == '}' {
			break
		}
		if l.src[i] != ',' {
			return i, false
		}
		l.putByte(',')
		i++
	}
	if event {
		l.classify(base)
		if l.text {
			l.tx = l.tx[:mark]
			l.renderEvent(base, false)
		}
		l.drop(start, base)
	}
	l.putByte('}')
	l.items = -1
	return i + 1, true
}

// flatEvents lets the pass copy events flat (event); the tests turn it
// off to compare with the general pass.
var flatEvents = true

// event copies the object at src[i], which starts as an event does, in
// one flat pass over its members: an event's values hold no event and
// need no lines of their own (its paragraph is written from its members),
// so they are copied whole, never entered. done is false, with nothing
// written, when the object turns out not to be an event, or to hold one:
// the general pass (members) copies it then.
func (l *leaner) event(i, base int) (end int, ok, done bool) {
	from, start, mark := i, l.n, len(l.tx)
	l.refs, l.lists = l.refs[:0], eventLists{}
	undo := func() (int, bool, bool) {
		if !l.alias {
			l.dst = l.dst[:start]
		}
		l.n, l.tx, l.spans = start, l.tx[:mark], l.spans[:base]
		return i, false, false
	}
	l.putByte('{')
	i++
	event, check, drop := false, false, false
	for m := 0; ; m++ {
		if i >= len(l.src) || l.src[i] != '"' {
			return undo()
		}
		var (
			keyEnd int
			kind   memberKind
		)
		if m < len(l.names) && hasName(l.src, i, l.names[m].name) {
			keyEnd, kind = i+len(l.names[m].name)+2, l.names[m].kind
		} else {
			var ok bool
			if keyEnd, ok = stringEnd(l.src, i); !ok {
				return undo()
			}
			kind = kindOf(l.src[i+1 : keyEnd-1])
			l.names = append(l.names[:min(m, len(l.names))], memberName{l.src[i+1 : keyEnd-1], kind})
			l.ops = l.ops[:0] // planned again from the new names (sameEvent)
		}
		if keyEnd >= len(l.src) || l.src[keyEnd] != ':' {
			return undo()
		}
		var vEnd int
		if k := int(kind.text) - 1; l.text && (k == fOwners || k == fParticipants || k == fEvidence) &&
			!(l.summary && kind.fullOnly) && l.src[keyEnd+1] == '[' {
			// A list the text shows: read for it as it is copied.
			var ok bool
			if vEnd, ok = l.gather(k, keyEnd+1); !ok {
				return undo()
			}
		} else {
			vEnd = valueEnd(l.src, keyEnd+1)
		}
		if vEnd <= keyEnd+1 || vEnd >= len(l.src) {
			return undo()
		}
		s := memberSpan{nameStart: i + 1, nameEnd: keyEnd - 1, start: l.n, items: -1}
		if len(l.spans) > base {
			s.start-- // the comma before it
		}
		name := l.src[s.nameStart:s.nameEnd]
		s.kind = kind
		drop = drop || l.dropped(s)
		event = event || bytes.Equal(name, markerName)
		if c := l.src[keyEnd+1]; !s.kind.field && (c == '{' || c == '[') {
			check = true // a member the wire table does not name may hold an event
		}
		l.put(i, vEnd)
		s.end = l.n
		l.spans = append(l.spans, s)
		i = vEnd
		if l.src[i] == '}' {
			break
		}
		if l.src[i] != ',' {
			return undo()
		}
		l.putByte(',')
		i++
	}
	if l.diverged {
		return i, false, true
	}
	// The marker of an event is a member name, never inside a string (its
	// quotes would be escaped): once is this event's own.
	if !event || (check && countMarkers(l.src[from:i+1]) != 1) {
		return undo()
	}
	if l.text {
		l.renderEvent(base, true)
	}
	if drop {
		l.drop(start, base)
	}
	l.putByte('}')
	l.spans = l.spans[:base]
	l.items = -1
	return i + 1, true, true
}

// memberName is a member name of the last event read flat and its kind:
// the next event of a list has the same members in the same order, so
// its names are compared with these rather than searched for their end
// and looked up.
type memberName struct {
	name []byte
	kind memberKind
}

// hasName reports whether the string at src[i] is the name name (as it
// is written, escapes included).
func hasName(src []byte, i int, name []byte) bool {
	j := i + 1 + len(name)
	return j < len(src) && src[j] == '"' && string(src[i+1:j]) == string(name)
}

// looksLikeEvent reports whether the object at b starts as every event the
// API writes does, {"id":<n>,"title":, so that its members need no lines
// of their own (the object's end tells for sure).
func looksLikeEvent(b []byte) bool {
	const head = `{"id":`
	if !bytes.HasPrefix(b, []byte(head)) {
		return false
	}
	j := len(head)
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	return bytes.HasPrefix(b[j:], []byte(`,"title":`))
}

// put writes src[i:j] to dst.
func (l *leaner) put(i, j int) {
	if !l.alias {
		l.dst = append(l.dst, l.src[i:j]...)
		l.n = len(l.dst)
		return
	}
	if i != l.n {
		l.diverged = true
		return
	}
	l.n = j
}

// putByte writes c, the byte of punctuation at the source's position, to
// dst.
func (l *leaner) putByte(c byte) {
	if !l.alias {
		l.dst = append(l.dst, c)
		l.n = len(l.dst)
		return
	}
	if l.n >= len(l.src) || l.src[l.n] != c {
		l.diverged = true
		return
	}
	l.n++
}

// drop rewrites the event object started at dst[start] without the
// members its lean form leaves out, when it has any.
func (l *leaner) drop(start, base int) {
	spans := l.spans[base:]
	if !slices.ContainsFunc(spans, l.dropped) {
		return
	}
	if l.alias {
		l.diverged = true // src is never written: the pass is made again, copying
		return
	}
	w := start + 1
	first := true
	for _, s := range spans {
		if l.dropped(s) {
			continue
		}
		from := s.start
		if l.dst[from] == ',' {
			from++
		}
		if !first {
			l.dst[w] = ','
			w++
		}
		first = false
		w += copy(l.dst[w:], l.dst[from:s.end])
	}
	l.dst, l.n = l.dst[:w], w
}

// dropped reports whether an event's lean form leaves member s out: a
// legacy alias, or at detail summary a field only the full form has.
func (l *leaner) dropped(s memberSpan) bool {
	return s.kind.legacy || (l.summary && s.kind.fullOnly)
}

// classify looks up the kind of each member of the event whose members
// are spans[base:].
func (l *leaner) classify(base int) {
	for i := base; i < len(l.spans); i++ {
		s := &l.spans[i]
		s.kind = kindOf(l.src[s.nameStart:s.nameEnd]) // event member names have no escapes
	}
}

// member is one member of an object a tool composes, or of its schema.
type member struct {
	name  string
	value any // []byte for values, map[string]any for schemas
}

// fieldOf returns the raw JSON of a top-level member of body (nil when
// absent).
func fieldOf(body []byte, name string) []byte {
	r := gjson.GetBytes(body, gjson.Escape(name))
	if !r.Exists() {
		return nil
	}
	return []byte(r.Raw)
}

// count returns the number of items of the list at path (0 when absent).
func count(body []byte, path string) int {
	r := gjson.GetBytes(body, path)
	if !r.IsArray() {
		return 0
	}
	return int(r.Get("#").Int())
}

// composeObject writes a JSON object of raw members (absent values as
// null).
func composeObject(members ...member) []byte {
	b := []byte{'{'}
	for i, m := range members {
		if i > 0 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(m.name)
		b = append(b, name...)
		b = append(b, ':')
		raw, _ := m.value.([]byte)
		if len(raw) == 0 {
			raw = []byte("null")
		}
		b = append(b, raw...)
	}
	return append(b, '}')
}

// withMember appends a string member to a JSON object (a copy: obj may be
// the route's body).
func withMember(obj []byte, name, value string) []byte {
	obj = bytes.TrimSpace(obj)
	if len(obj) < 2 || obj[len(obj)-1] != '}' {
		return obj
	}
	out := appendMember(make([]byte, 0, len(obj)+len(name)+len(value)+8), obj, name, value)
	return out
}

// appendMember appends the JSON object obj with a string member added
// last.
func appendMember(dst, obj []byte, name, value string) []byte {
	out := append(dst, obj[:len(obj)-1]...)
	if len(bytes.TrimSpace(obj[:len(obj)-1])) > 1 {
		out = append(out, ',')
	}
	out = wire.AppendString(out, name, false)
	out = append(out, ':')
	out = wire.AppendString(out, value, false)
	return append(out, '}')
}

// stringEnd returns the index after the JSON string starting at b[i]: the
// first quote not escaped by an odd run of backslashes.
func stringEnd(b []byte, i int) (int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b), false
		}
		j += k
		if b[j-1] != '\\' { // j-1 >= i, and b[i] is the opening quote
			return j + 1, true
		}
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, true
		}
		j++
	}
}
