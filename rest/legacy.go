package rest

import (
	"bytes"
	"errors"

	"github.com/cryptointel/cryptointel/wire"
)

// legacyAliases are the legacy names of event fields that every /v1 event
// carries beside the canonical ones (contract section 2.1), in the order they
// follow the canonical fields: those of wire.EventFields.
//
// The fixed operations select only the canonical fields and the facade
// copies each value under its legacy name (withLegacyAliases), so the
// executor resolves and encodes every list once: the three legacy lists
// alone were about a quarter of the CPU of a computed /v1/latest page (see
// tests/bench/NOTES.md). The GraphQL schema keeps the legacy fields for
// GraphQL clients.
var legacyAliases []legacyAlias

// legacyAlias is a legacy name and the canonical field it repeats.
type legacyAlias struct{ legacy, canonical string }

// maxLegacyAliases bounds len(legacyAliases): the writer keeps an event's
// members in arrays of this size, so copying allocates nothing.
const maxLegacyAliases = 16

// eventMember is what a member name means in an event object: its index in
// wire.EventFields (its place among the canonical fields) and, when it has
// one, the index of its legacy alias; or the index of the alias it is.
type eventMember struct {
	field    int  // index in wire.EventFields; -1 for a legacy name
	alias    int  // index in legacyAliases; -1 for none
	isLegacy bool // the name is the legacy one
}

// eventMembers maps every canonical and legacy event member name.
var eventMembers = map[string]eventMember{}

// markerField is the index of eventMarkerKey in wire.EventFields.
var markerField int

// eventMarkerKey is the member that makes a JSON object an event: no other
// type of the schema has a field of that name.
const eventMarkerKey = "latestEvidenceTimestamp"

func init() {
	for i, f := range wire.EventFields {
		m := eventMember{field: i, alias: -1}
		if f.Legacy != "" {
			m.alias = len(legacyAliases)
			eventMembers[f.Legacy] = eventMember{field: -1, alias: m.alias, isLegacy: true}
			legacyAliases = append(legacyAliases, legacyAlias{legacy: f.Legacy, canonical: f.Name})
		}
		eventMembers[f.Name] = m
	}
	if len(legacyAliases) > maxLegacyAliases {
		panic("rest: wire.EventFields has more legacy aliases than maxLegacyAliases")
	}
	m, ok := eventMembers[eventMarkerKey]
	if !ok {
		panic("rest: the event marker " + eventMarkerKey + " is not a field of wire.EventFields")
	}
	markerField = m.field
}

var (
	eventMarker = []byte(`"` + eventMarkerKey + `":`)

	errNotCompact = errors.New("operation data is not compact JSON")
)

// withLegacyAliases returns data (the executor's compact JSON) with every
// event object (one with a latestEvidenceTimestamp member) given its legacy
// aliases: right after its last canonical source among
// latestEvidenceTimestamp and significance, each legacy member whose
// canonical member is present, in legacyAliases order, unless the object
// has it already. Everything else is copied byte for byte. Data holding no
// event is returned as it is.
func withLegacyAliases(data []byte) ([]byte, error) {
	if !bytes.Contains(data, eventMarker) {
		return data, nil
	}
	lw := legacyWriter{src: data, dst: make([]byte, 0, len(data)+len(data)/2)}
	end, err := lw.value(0)
	if err != nil {
		return nil, err
	}
	if end != len(data) {
		return nil, errNotCompact
	}
	return lw.dst, nil
}

// legacyWriter copies compact JSON from src to dst, adding legacy aliases to
// event objects.
type legacyWriter struct {
	src, dst []byte
}

// span is a member's value in dst.
type span struct{ start, end int }

// value copies the value starting at src[i] and returns the index after it.
func (w *legacyWriter) value(i int) (int, error) {
	if i >= len(w.src) {
		return 0, errNotCompact
	}
	switch w.src[i] {
	case '{':
		return w.object(i)
	case '[':
		i, empty := w.open(i, ']')
		if empty {
			return i, nil
		}
		for {
			var (
				err    error
				closed bool
			)
			if i, err = w.value(i); err != nil {
				return 0, err
			}
			if i, closed, err = w.separator(i, ']'); err != nil || closed {
				return i, err
			}
		}
	default:
		end, ok := skipValue(w.src, i)
		if !ok {
			return 0, errNotCompact
		}
		w.dst = append(w.dst, w.src[i:end]...)
		return end, nil
	}
}

// object copies the object starting at src[i], member by member. An event
// gets its legacy aliases right after the last of its members that
// wire.EventFields places at or after the marker (latestEvidenceTimestamp,
// significance), so members the table does not know, such as a content
// item's sourceType, stay after them.
func (w *legacyWriter) object(i int) (int, error) {
	var (
		canonical [maxLegacyAliases]span // zero end: absent
		present   [maxLegacyAliases]bool // the legacy name is a member
		isEvent   bool
		insertAt  int // dst index after the member the aliases follow
	)
	i, empty := w.open(i, '}')
	if empty {
		return i, nil
	}
	for {
		if i >= len(w.src) || w.src[i] != '"' {
			return 0, errNotCompact
		}
		kend, ok := skipString(w.src, i)
		if !ok || kend >= len(w.src) || w.src[kend] != ':' {
			return 0, errNotCompact
		}
		key := w.src[i+1 : kend-1]
		w.dst = append(w.dst, w.src[i:kend+1]...)
		vstart := len(w.dst)
		var err error
		if i, err = w.value(kend + 1); err != nil {
			return 0, err
		}
		if m, known := eventMembers[string(key)]; known {
			switch {
			case m.isLegacy:
				present[m.alias] = true
			default:
				if m.alias >= 0 {
					canonical[m.alias] = span{vstart, len(w.dst)}
				}
				if string(key) == eventMarkerKey {
					isEvent = true
				}
				if m.field >= markerField {
					insertAt = len(w.dst)
				}
			}
		}
		if isEvent && i < len(w.src) && w.src[i] == '}' {
			w.insertAliases(insertAt, &canonical, &present)
		}
		var closed bool
		if i, closed, err = w.separator(i, '}'); err != nil || closed {
			return i, err
		}
	}
}

// open copies the opening bracket at src[i] and returns the index after
// it; when the container is empty (closing follows at once) it copies that
// too, returns the index after it and empty.
func (w *legacyWriter) open(i int, closing byte) (next int, empty bool) {
	w.dst = append(w.dst, w.src[i])
	i++
	if i < len(w.src) && w.src[i] == closing {
		w.dst = append(w.dst, closing)
		return i + 1, true
	}
	return i, false
}

// separator copies the comma or the closing bracket at src[i] and returns
// the index after it; closed reports the bracket.
func (w *legacyWriter) separator(i int, closing byte) (next int, closed bool, err error) {
	if i >= len(w.src) || (w.src[i] != ',' && w.src[i] != closing) {
		return 0, false, errNotCompact
	}
	w.dst = append(w.dst, w.src[i])
	return i + 1, w.src[i] == closing, nil
}

// insertAliases inserts at dst[at] the legacy members whose canonical
// member was found and whose own name was not.
func (w *legacyWriter) insertAliases(at int, canonical *[maxLegacyAliases]span, present *[maxLegacyAliases]bool) {
	n := 0
	for k, a := range legacyAliases {
		if c := canonical[k]; c.end > 0 && !present[k] {
			n += len(a.legacy) + 4 + c.end - c.start
		}
	}
	if n == 0 {
		return
	}
	old := len(w.dst)
	w.dst = append(w.dst, make([]byte, n)...)
	copy(w.dst[at+n:], w.dst[at:old])
	out := w.dst[at:at]
	for k, a := range legacyAliases {
		if c := canonical[k]; c.end > 0 && !present[k] {
			out = append(out, ',', '"')
			out = append(out, a.legacy...)
			out = append(out, '"', ':')
			if c.start >= at { // a source after the aliases has moved by n
				c.start, c.end = c.start+n, c.end+n
			}
			out = append(out, w.dst[c.start:c.end]...)
		}
	}
}
