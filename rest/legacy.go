package rest

import (
	"bytes"
	"errors"
)

// legacyAliases are the legacy names of event fields that every /v1 event
// carries beside the canonical ones (contract section 2.1), in the order they
// follow the canonical fields.
//
// The fixed operations select only the canonical fields and the facade
// copies each value under its legacy name (withLegacyAliases), so the
// executor resolves and encodes every list once: the three legacy lists
// alone were about a quarter of the CPU of a computed /v1/latest page (see
// tests/bench/NOTES.md). The GraphQL schema keeps the legacy fields for
// GraphQL clients.
var legacyAliases = [...]struct{ legacy, canonical string }{
	{"globalSummary", "summary"},
	{"bulletSummary", "bullets"},
	{"eventOwner", "owners"},
	{"eventParticipants", "participants"},
	{"posts", "evidence"},
	{"latestPostTimestamp", "latestEvidenceTimestamp"},
	{"signal", "significance"},
}

// eventMarkerKey is the member that makes a JSON object an event: no other
// type of the schema has a field of that name.
const eventMarkerKey = "latestEvidenceTimestamp"

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

// object copies the object starting at src[i], member by member.
func (w *legacyWriter) object(i int) (int, error) {
	var (
		canonical [len(legacyAliases)]span // zero end: absent
		present   [len(legacyAliases)]bool // the legacy name is a member
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
		if n, isCanonical := legacyIndex(key); n >= 0 {
			if !isCanonical {
				present[n] = true
			} else {
				canonical[n] = span{vstart, len(w.dst)}
				switch legacyAliases[n].canonical {
				case eventMarkerKey:
					isEvent = true
					insertAt = len(w.dst)
				case "significance":
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
func (w *legacyWriter) insertAliases(at int, canonical *[len(legacyAliases)]span, present *[len(legacyAliases)]bool) {
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

// legacyIndex returns the index in legacyAliases of key, and whether key
// is the canonical name there (else the legacy one); -1 when key is
// neither.
func legacyIndex(key []byte) (int, bool) {
	for n, a := range legacyAliases {
		switch string(key) {
		case a.canonical:
			return n, true
		case a.legacy:
			return n, false
		}
	}
	return -1, false
}
