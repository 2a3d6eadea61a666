package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/tidwall/gjson"
)

// The text content beside a tool's structured content: what a client that
// shows a model only text gives it. The lean pass writes it as it goes
// (leaner): each event as a short paragraph under the path of its list,
// every other value that holds no event as one "path: value" line. A
// result without events is its JSON.

// eventMemberPrefix starts the marker member of an event.
const eventMemberPrefix = `"` + eventMarker + `":`

// hasEvents reports whether a result holds events.
func hasEvents(result []byte) bool { return bytes.Contains(result, []byte(eventMemberPrefix)) }

// render writes the text of a lean result in a pass of its own (for a
// result composed or cut after the lean pass).
func render(result []byte) []byte {
	r, _ := walk(result, false, true)
	if r.text == nil {
		return result
	}
	return r.text
}

// renderEvent writes the event whose members are spans[base:] (before the
// lean pass drops any): a heading line (number, id, time, category,
// significance, how it matched), its title and summary, and what the full
// form adds (owners, participants, bullets, evidence) when the result
// keeps it. A new list gets its path as a heading first.
func (l *leaner) renderEvent(base int) {
	container := string(l.path)
	if i := bytes.LastIndexByte(l.path, '['); i >= 0 {
		container = string(l.path[:i])
	}
	if container != l.container || l.events == 0 {
		l.tx = append(append(l.tx, container...), ":\n"...)
		l.container, l.num = container, 0
	}
	l.num++
	l.events++
	var f [numTextFields][]byte
	evidence := 0
	for _, s := range l.spans[base:] {
		name := l.src[s.nameStart:s.nameEnd]
		k, ok := textFields[string(name)]
		if !ok || (l.summary && fullOnly[string(name)]) {
			continue
		}
		from := s.start
		if l.dst[from] == ',' {
			from++
		}
		f[k] = l.dst[from+len(name)+3 : s.end] // past "name":
		if k == fEvidence {
			evidence = s.items
		}
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
	b = appendText(append(b, "\n   "...), f[fTitle])
	b = append(b, '\n')
	if len(f[fSummary]) > 2 {
		b = appendText(append(b, "   "...), f[fSummary])
		b = append(b, '\n')
	}
	b = appendLabels(b, "owners", f[fOwners])
	b = appendLabels(b, "participants", f[fParticipants])
	if len(f[fBullets]) > 2 {
		gjson.ParseBytes(f[fBullets]).ForEach(func(_, s gjson.Result) bool {
			b = append(append(append(b, "   • "...), s.Str...), '\n')
			return true
		})
	}
	if evidence > 0 {
		b = append(append(b, "   evidence: "...), plural(evidence, "post")...)
		b = append(append(append(b, ", newest "...), gjson.GetBytes(f[fEvidence], "0.url").Str...), '\n')
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

// appendLabels writes a list of entity refs as "   name: Label (id), …".
func appendLabels(b []byte, name string, raw []byte) []byte {
	if len(raw) <= 2 {
		return b
	}
	b = append(append(b, "   "...), name...)
	b = append(b, ": "...)
	first := true
	gjson.ParseBytes(raw).ForEach(func(_, e gjson.Result) bool {
		if !first {
			b = append(b, ", "...)
		}
		first = false
		b = append(b, e.Get("label").Str...)
		b = append(append(append(b, " ("...), e.Get("id").Raw...), ')')
		return true
	})
	return append(b, '\n')
}

// appendText appends a JSON string's text (a value of another kind as it
// is).
func appendText(b, raw []byte) []byte {
	if len(raw) < 2 || raw[0] != '"' {
		return append(b, raw...)
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return append(b, raw[1:len(raw)-1]...)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return append(b, raw...)
	}
	return append(b, s...)
}

// appendValueText appends a value as a "path: value" line shows it: a
// string's text, anything else as its JSON.
func appendValueText(b, raw []byte) []byte { return appendText(b, raw) }
