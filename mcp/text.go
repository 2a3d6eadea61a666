package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/cryptointel/cryptointel/wire"
)

// The text content beside a tool's structured content: what a client that
// shows a model only text gives it. The lean pass writes it as it goes
// (leaner): each event as a short paragraph under the path of its list,
// every other value that holds no event as one "path: value" line. A
// result without events is its JSON. The paragraph is written from the
// event's members as the pass passes them (writeEvent), never from a
// second reading of the event.
//
// The text is written as it goes into the response: escaped, the inside
// of a JSON string. The strings it shows are the body's, already escaped
// (JSON, HTML-safe): they are copied as they are, never unescaped to be
// escaped again; a newline is written `\n`.

// nl is a newline inside a JSON string.
const nl = `\n`

// eventMemberPrefix starts the marker member of an event.
const eventMemberPrefix = `"` + eventMarker + `":`

// hasEvents reports whether a result holds events.
func hasEvents(result []byte) bool { return nextMarker(result, 0) >= 0 }

// The marker member's name after "latest, and before: a search for the
// name from its first byte would stop at every quote of the body, one
// from the E at few letters of it.
const (
	markerHead = `"latest`
	markerTail = `EvidenceTimestamp":`
)

func init() {
	if markerHead+markerTail != eventMemberPrefix {
		panic("mcp: markerHead and markerTail must make eventMemberPrefix")
	}
}

// nextMarker returns the index of the first eventMemberPrefix in b at or
// after from, -1 when there is none.
func nextMarker(b []byte, from int) int {
	for from <= len(b) {
		j := bytes.Index(b[from:], []byte(markerTail))
		if j < 0 {
			return -1
		}
		k := from + j
		if k >= len(markerHead) && string(b[k-len(markerHead):k]) == markerHead {
			return k - len(markerHead)
		}
		from = k + 1
	}
	return -1
}

// countMarkers is bytes.Count(b, eventMemberPrefix).
func countMarkers(b []byte) int {
	n := 0
	for i := nextMarker(b, 0); i >= 0; i = nextMarker(b, i+len(eventMemberPrefix)) {
		n++
	}
	return n
}

// render writes the text of a lean result in a pass of its own (for a
// result composed or cut after the lean pass), escaped; nil for a result
// without events.
func render(result []byte) []byte {
	r, _ := walk(result, false, true)
	return r.text
}

// renderEvent writes the event whose members are spans[base:] (before the
// lean pass drops any): a heading line (number, id, time, category,
// significance, how it matched), its title and summary, and what the full
// form adds (owners, participants, bullets, evidence) when the result
// keeps it. A new list gets its path as a heading first.
func (l *leaner) renderEvent(base int, gathered bool) {
	if !gathered {
		l.refs = l.refs[:0]
	}
	var f [numTextFields][]byte
	for _, s := range l.spans[base:] {
		if s.kind.text == 0 || (l.summary && s.kind.fullOnly) {
			continue
		}
		k, name := int(s.kind.text-1), l.src[s.nameStart:s.nameEnd]
		from := s.start
		if l.dst[from] == ',' {
			from++
		}
		f[k] = l.dst[from+len(name)+3 : s.end] // past "name":
	}
	l.writeEvent(&f, gathered)
}

// writeEvent writes the paragraph of an event whose text fields' values
// are f; gathered says its lists were read as the pass copied them
// (l.lists, l.refs).
func (l *leaner) writeEvent(f *[numTextFields][]byte, gathered bool) {
	container := l.path
	if i := bytes.LastIndexByte(l.path, '['); i >= 0 {
		container = l.path[:i]
	}
	if !bytes.Equal(container, l.container) || l.events == 0 {
		l.tx = append(append(l.tx, container...), ":"+nl...)
		l.container, l.num = append(l.container[:0], container...), 0
	}
	l.num++
	l.events++
	evidence := 0
	// The evidence counted and its newest post's url found in one pass
	// (or as the flat pass read it).
	var url []byte
	if gathered && l.lists.has[fEvidence] {
		evidence, url = l.lists.evidence, l.lists.url
	} else {
		eachItemWith(f[fEvidence], "url", "", func(_, u, _ []byte) {
			if evidence == 0 {
				url = u
			}
			evidence++
		})
	}
	b := l.tx
	b = strconv.AppendInt(b, int64(l.num), 10)
	b = append(b, ". #"...)
	b = append(b, f[fID]...)
	if t := f[fAt]; len(t) >= 18 {
		b = append(append(append(append(b, " · "...), t[1:11]...), ' '), t[12:17]...)
		b = append(b, 'Z')
	}
	if len(f[fCategory]) > 2 {
		b = append(b, " · "...)
		b = appendText(b, f[fCategory])
		if len(f[fSubcategory]) > 2 {
			b = append(b, '/')
			b = appendText(b, f[fSubcategory])
		}
	}
	if v := f[fSignificance]; len(v) > 0 && string(v) != "null" {
		b = append(append(b, " · significance "...), v...)
	}
	if v := f[fMatchedVia]; len(v) > 0 {
		b = appendText(append(b, " · matchedVia "...), v)
	}
	if v := f[fMatchType]; len(v) > 0 {
		b = appendText(append(b, " · matchType "...), v)
	}
	b = appendText(append(b, nl+"   "...), f[fTitle])
	b = append(b, nl...)
	if len(f[fSummary]) > 2 {
		b = appendText(append(b, "   "...), f[fSummary])
		b = append(b, nl...)
	}
	for _, k := range [...]int{fOwners, fParticipants} {
		if len(f[k]) <= 2 {
			continue
		}
		b = append(append(b, "   "...), textNames[k]...)
		b = append(b, ": "...)
		if gathered && l.lists.has[k] {
			b = appendLabels(b, l.refs[l.lists.refs[k][0]:l.lists.refs[k][1]])
		} else {
			from := len(l.refs) // after the lists gathered
			eachItemWith(f[k], "label", "id", func(_, label, id []byte) { l.refs = append(l.refs, labelID{label, id}) })
			b = appendLabels(b, l.refs[from:])
		}
		b = append(b, nl...)
	}
	if len(f[fBullets]) > 2 {
		if gathered && l.lists.has[fBullets] {
			for _, s := range l.bullets {
				if len(s) > 0 && s[0] == '"' {
					b = append(appendText(append(b, "   • "...), s), nl...)
				}
			}
		} else {
			eachItem(f[fBullets], func(s []byte) {
				if len(s) > 0 && s[0] == '"' {
					b = append(appendText(append(b, "   • "...), s), nl...)
				}
			})
		}
	}
	if evidence > 0 {
		b = strconv.AppendInt(append(b, "   evidence: "...), int64(evidence), 10)
		if b = append(b, " post"...); evidence != 1 {
			b = append(b, 's') // as plural writes it
		}
		b = append(b, ", newest "...)
		if len(url) > 0 && url[0] == '"' {
			b = appendText(b, url)
		}
		b = append(b, nl...)
	}
	l.tx = b
}

// The event members the text shows.
const (
	fID = iota
	fAt
	fCategory
	fSubcategory
	fSignificance
	fMatchedVia
	fMatchType
	fTitle
	fSummary
	fOwners
	fParticipants
	fBullets
	fEvidence
	numTextFields
)

var textFields = map[string]int{
	"id": fID, eventMarker: fAt, "eventCategory": fCategory, "eventSubcategory": fSubcategory,
	"significance": fSignificance, "matchedVia": fMatchedVia, "matchType": fMatchType, "title": fTitle,
	"summary": fSummary, "owners": fOwners, "participants": fParticipants, "bullets": fBullets, "evidence": fEvidence,
}

// appendLabels writes entity refs as "Label (id), …".
func appendLabels(b []byte, refs []labelID) []byte {
	for i, r := range refs {
		if i > 0 {
			b = append(b, ", "...)
		}
		if len(r.label) > 0 && r.label[0] == '"' {
			b = appendText(b, r.label)
		}
		b = append(append(append(b, " ("...), r.id...), ')')
	}
	return b
}

// textNames are the names of the text's lists of entity refs.
var textNames = [numTextFields]string{fOwners: "owners", fParticipants: "participants"}

// eachItemWith calls fn with each item of the compact JSON list raw and,
// for an object item, the raw values of its first members named a and b
// (nil when it has none; names without escapes): each item is read once.
func eachItemWith(raw []byte, a, b string, fn func(item, va, vb []byte)) {
	itemsWith(raw, 0, a, b, false, fn)
}

// itemsWith is eachItemWith over the list at src[i], returning the index
// after it (ok false when it does not read as a compact JSON list: fn may
// have been called for the items before). An item's members after the
// ones named a and b are skipped, not read one by one; with once set,
// only the first item's members are read (fn gets nil values for the
// others).
func itemsWith(src []byte, i int, a, b string, once bool, fn func(item, va, vb []byte)) (int, bool) {
	if i >= len(src) || src[i] != '[' {
		return i, false
	}
	first := true
	for i++; i < len(src); {
		if src[i] == ']' {
			return i + 1, true
		}
		start, end := i, 0
		var va, vb []byte
		if src[i] != '{' || (once && !first) {
			end = valueEnd(src, i)
		} else {
			for j := i + 1; ; {
				if j >= len(src) {
					return j, false
				}
				if src[j] == '}' {
					end = j + 1
					break
				}
				keyEnd, ok := stringEnd(src, j)
				if !ok || keyEnd >= len(src) || src[keyEnd] != ':' {
					return j, false
				}
				vEnd := valueEnd(src, keyEnd+1)
				switch name := src[j+1 : keyEnd-1]; {
				case va == nil && string(name) == a:
					va = src[keyEnd+1 : vEnd]
				case vb == nil && string(name) == b:
					vb = src[keyEnd+1 : vEnd]
				}
				j = vEnd
				if va != nil && (vb != nil || b == "") {
					end = objectEnd(src, j) // the rest is not read
					break
				}
				if j < len(src) && src[j] == ',' {
					j++
				}
			}
		}
		first = false
		if end <= start || end > len(src) {
			return i, false
		}
		fn(src[start:end], va, vb)
		i = end
		if i < len(src) && src[i] == ',' {
			i++
		}
	}
	return i, false
}

// labelID is an entity ref's label and id, as the text shows them.
type labelID struct{ label, id []byte }

// eventLists are what the text shows of an event's lists, gathered by the
// flat pass as it reads them (leaner.gather), so that they are read once.
type eventLists struct {
	// has marks the lists gathered, by text field; refs are an
	// entity-ref list's labels and ids, l.refs[from:to].
	has      [numTextFields]bool
	refs     [numTextFields][2]int
	evidence int
	url      []byte
}

// gather reads the list at src[i] of the event member that is text field
// k (owners, participants or evidence) for the text, returning the index
// after it (ok false when it does not read as a list).
func (l *leaner) gather(k, i int) (int, bool) {
	switch k {
	case fOwners, fParticipants:
		from := len(l.refs)
		end, ok := itemsWith(l.src, i, "label", "id", false, func(_, label, id []byte) {
			l.refs = append(l.refs, labelID{label, id})
		})
		l.lists.has[k], l.lists.refs[k] = ok, [2]int{from, len(l.refs)}
		return end, ok
	case fEvidence:
		l.lists.evidence, l.lists.url = 0, nil
		end, ok := itemsWith(l.src, i, "url", "", true, func(_, u, _ []byte) {
			if l.lists.evidence == 0 {
				l.lists.url = u
			}
			l.lists.evidence++
		})
		l.lists.has[k] = ok
		return end, ok
	}
	return valueEnd(l.src, i), true
}

// The event members the text shows are read where the lean pass copied
// them (compact JSON, as the routes write it), without parsing them again
// into values: eachItem walks a list's items, eachItemWith each item's
// members the text shows too.

// valueEnd returns the index after the compact JSON value at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, i)
		return end
	case '{', '[':
		return objectEnd(b, i+1)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j
}

// objectEnd returns the index after the object (or list) whose members go
// on at b[i] (at the comma or the brace after one of them, or its first).
func objectEnd(b []byte, i int) int {
	depth := 1
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			end, _ := stringEnd(b, j)
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(b)
}

// eachItem calls fn with each item of the compact JSON list raw.
func eachItem(raw []byte, fn func(item []byte)) {
	if len(raw) < 2 || raw[0] != '[' {
		return
	}
	for i := 1; i < len(raw) && raw[i] != ']'; {
		end := valueEnd(raw, i)
		if end <= i {
			return
		}
		fn(raw[i:end])
		i = end
		if i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

// appendText appends a JSON string's text, escaped: the inside of the
// string as it is (a value of another kind as its JSON, escaped).
func appendText(b, raw []byte) []byte {
	if len(raw) >= 2 && raw[0] == '"' {
		return append(b, raw[1:len(raw)-1]...)
	}
	if bytes.IndexByte(raw, '"') < 0 && bytes.IndexByte(raw, '\\') < 0 {
		return append(b, raw...) // a number, true, false or null
	}
	return appendEscaped(b, unsafeString(raw))
}

// appendValueText appends a value as a "path: value" line shows it: a
// string's text, anything else as its JSON.
func appendValueText(b, raw []byte) []byte { return appendText(b, raw) }

// appendEscaped appends s escaped as the inside of a JSON string.
func appendEscaped(b []byte, s string) []byte {
	n := len(b)
	b = wire.AppendString(b, s, false)
	// Without its quotes.
	copy(b[n:], b[n+1:len(b)-1])
	return b[:len(b)-2]
}

// trimNewlines drops the escaped newlines that end the escaped text b.
func trimNewlines(b []byte) []byte {
	for bytes.HasSuffix(b, []byte(nl)) {
		// The backslash before the n is an escape unless escaped itself.
		slashes := 0
		for i := len(b) - 2; i >= 0 && b[i] == '\\'; i-- {
			slashes++
		}
		if slashes%2 == 0 {
			break
		}
		b = b[:len(b)-len(nl)]
	}
	return b
}

// unquote is the text of the JSON string s.
func unquote(s []byte) string {
	var t string
	if json.Unmarshal(s, &t) != nil {
		return string(s)
	}
	return t
}
