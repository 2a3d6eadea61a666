package mcp

// The events of a list have the same members in the same order (their
// operation's selection), so once the flat pass (leaner.event) has read
// one, the next are read against its members (l.names) by sameEvent: each
// member's name compared where it is expected, its value's end found,
// the text's fields and lists taken as they are passed, and the event
// copied whole (or, at detail summary, member by member without the
// fields the compact form drops) — without recording each member for
// later, looking its kind up or walking the lists the text shows again.
// An event that differs in any way (another member, a list item that is
// not an object, a nested event) is left to leaner.event, so the bytes
// written are the same either way (TestSameEventsAsTheFlatPass).

// sameEvents lets the pass read events against the last one's members;
// the tests turn it off to compare with the flat pass.
var sameEvents = true

// memberOp is what sameEvent does with a member of the last event's
// (leaner.plan), worked out once for the events that follow it.
type memberOp struct {
	nameLen int
	// text is the member's text field when the text shows it, else -1;
	// list says how the text reads its list.
	text int8
	list int8
	// dropped: the lean form leaves it out; unnamed: the wire table does
	// not name it, so a list or object in it may hold an event.
	dropped, unnamed bool
}

// How the text reads a member's list.
const (
	listNone = iota
	listRefs
	listEvidence
	listBullets
)

// plan works out l.ops from l.names, and whether an event with these
// members holds the marker and has members to drop.
func (l *leaner) plan() {
	l.ops, l.opsMarker, l.opsDrop = l.ops[:0], false, false
	for _, nm := range l.names {
		kind, k := nm.kind, int(nm.kind.text)-1
		op := memberOp{nameLen: len(nm.name), text: -1, unnamed: !kind.field,
			dropped: kind.legacy || (l.summary && kind.fullOnly)}
		if l.text && k >= 0 && !(l.summary && kind.fullOnly) {
			op.text = int8(k)
			switch k {
			case fOwners, fParticipants:
				op.list = listRefs
			case fEvidence:
				op.list = listEvidence
			case fBullets:
				op.list = listBullets
			}
		}
		l.opsMarker = l.opsMarker || k == fAt
		l.opsDrop = l.opsDrop || op.dropped
		l.ops = append(l.ops, op)
	}
}

// memberBound is where a member of an event read by sameEvent starts (its
// name's quote) and where its value ends.
type memberBound struct{ start, end int }

// sameEvent reads the event object at src[i] whose members are named as
// the last event's, in the same order. done is false, with nothing
// written, when it is not such an event: leaner.event reads it then.
func (l *leaner) sameEvent(i int) (end int, ok, done bool) {
	src, names := l.src, l.names
	if !sameEvents || len(names) == 0 || i >= len(src) || src[i] != '{' {
		return i, false, false
	}
	if len(l.ops) != len(names) {
		l.plan()
	}
	if !l.opsMarker || (l.opsDrop && l.alias) {
		return i, false, false
	}
	from := i
	i++
	var f [numTextFields][]byte
	l.refs, l.lists, l.bounds = l.refs[:0], eventLists{}, l.bounds[:0]
	check, ops := false, l.ops
	for m := range ops {
		op := &ops[m]
		if m > 0 {
			if i >= len(src) || src[i] != ',' {
				return from, false, false
			}
			i++
		}
		if !hasName(src, i, names[m].name) {
			return from, false, false
		}
		v := i + op.nameLen + 3 // past "name":
		if v >= len(src) || src[v-1] != ':' {
			return from, false, false
		}
		var e int
		switch {
		case op.list == listRefs && src[v] == '[':
			e = l.refList(int(op.text), v)
		case op.list == listEvidence && src[v] == '[':
			e = l.evidenceList(v)
		case op.list == listBullets && src[v] == '[':
			e = l.bulletList(v)
		default:
			e = valueEnd(src, v)
		}
		if e <= v || e >= len(src) {
			return from, false, false
		}
		if c := src[v]; op.unnamed && (c == '{' || c == '[') {
			check = true // a member the wire table does not name may hold an event
		}
		if op.text >= 0 {
			f[op.text] = src[v:e]
		}
		if l.opsDrop {
			l.bounds = append(l.bounds, memberBound{i, e})
		}
		i = e
	}
	drop := l.opsDrop
	if i >= len(src) || src[i] != '}' {
		return from, false, false
	}
	// The marker of an event is a member name, never inside a string (its
	// quotes would be escaped): once is this event's own.
	if check && countMarkers(src[from:i+1]) != 1 {
		return from, false, false
	}
	if !drop {
		l.put(from, i+1)
	} else {
		l.putByte('{')
		first := true
		for m, b := range l.bounds {
			if ops[m].dropped {
				continue
			}
			if !first {
				l.putByte(',') // copying: a pass in place never drops
			}
			first = false
			l.put(b.start, b.end)
		}
		l.putByte('}')
	}
	if l.text {
		l.writeEvent(&f, true)
	}
	l.items = -1
	return i + 1, true, true
}

// refList reads the list of entity refs at src[v] (owners or
// participants, text field k) for the text, as gather does, and returns
// the index after it; 0 when an item is not an object (or the list does
// not read as compact JSON).
func (l *leaner) refList(k, v int) int {
	src := l.src
	from := len(l.refs)
	i := v + 1
	if i < len(src) && src[i] == ']' {
		l.lists.has[k], l.lists.refs[k] = true, [2]int{from, from}
		return i + 1
	}
	for i < len(src) {
		if src[i] != '{' {
			return 0
		}
		var label, id []byte
		j := i + 1
		end := 0
		for j < len(src) {
			if src[j] == '}' {
				end = j + 1
				break
			}
			var keyEnd int
			switch {
			case hasNameString(src, j, "id"):
				keyEnd = j + 4
			case hasNameString(src, j, "label"):
				keyEnd = j + 7
			default:
				var ok bool
				if keyEnd, ok = stringEnd(src, j); !ok {
					return 0
				}
			}
			if keyEnd >= len(src) || src[keyEnd] != ':' {
				return 0
			}
			vEnd := valueEnd(src, keyEnd+1)
			switch name := src[j+1 : keyEnd-1]; {
			case label == nil && string(name) == "label":
				label = src[keyEnd+1 : vEnd]
			case id == nil && string(name) == "id":
				id = src[keyEnd+1 : vEnd]
			}
			j = vEnd
			if label != nil && id != nil {
				end = l.elementEnd(i, j) // the rest is not read
				break
			}
			if j < len(src) && src[j] == ',' {
				j++
			}
		}
		next, more, ok := afterItem(src, i, end)
		if !ok {
			return 0
		}
		l.refs = append(l.refs, labelID{label, id})
		if !more {
			l.lists.has[k], l.lists.refs[k] = true, [2]int{from, len(l.refs)}
			return next
		}
		i = next
	}
	return 0
}

// evidenceList reads the evidence list at src[v] for the text, as gather
// does: its items counted and the first one's url. It returns the index
// after it, 0 when it does not read as compact JSON.
func (l *leaner) evidenceList(v int) int {
	src := l.src
	n := 0
	var url []byte
	i := v + 1
	if i < len(src) && src[i] == ']' {
		l.lists.has[fEvidence] = true
		return i + 1
	}
	for i < len(src) {
		end := 0
		switch {
		case n == 0 && src[i] == '{':
			// The first item: its first url, the rest skipped.
			for j := i + 1; j < len(src); {
				if src[j] == '}' {
					end = j + 1
					break
				}
				var keyEnd int
				if hasNameString(src, j, "url") {
					keyEnd = j + 5
				} else {
					var ok bool
					if keyEnd, ok = stringEnd(src, j); !ok {
						return 0
					}
				}
				if keyEnd >= len(src) || src[keyEnd] != ':' {
					return 0
				}
				vEnd := valueEnd(src, keyEnd+1)
				if string(src[j+1:keyEnd-1]) == "url" {
					url = src[keyEnd+1 : vEnd]
					end = l.elementEnd(i, vEnd)
					break
				}
				j = vEnd
				if j < len(src) && src[j] == ',' {
					j++
				}
			}
		case src[i] == '{':
			end = l.elementEnd(i, i+1)
		default:
			end = valueEnd(src, i)
		}
		next, more, ok := afterItem(src, i, end)
		if !ok {
			return 0
		}
		n++
		if !more {
			l.lists.has[fEvidence], l.lists.evidence, l.lists.url = true, n, url
			return next
		}
		i = next
	}
	return 0
}

// bulletList reads the list at src[v] (bullets) for the text, its items
// kept as eachItem would give them (l.bullets), and returns the index
// after it; 0 when it does not read as compact JSON.
func (l *leaner) bulletList(v int) int {
	src := l.src
	l.bullets = l.bullets[:0]
	i := v + 1
	if i < len(src) && src[i] == ']' {
		l.lists.has[fBullets] = true
		return i + 1
	}
	for i < len(src) {
		end := valueEnd(src, i)
		next, more, ok := afterItem(src, i, end)
		if !ok {
			return 0
		}
		l.bullets = append(l.bullets, src[i:end])
		if !more {
			l.lists.has[fBullets] = true
			return next
		}
		i = next
	}
	return 0
}

// afterItem steps past the list item at src[i:end]: to the next item
// (more), or past the list's closing bracket; ok is false when the item
// does not end inside src or neither a comma nor the bracket follows it.
func afterItem(src []byte, i, end int) (next int, more, ok bool) {
	if end <= i || end >= len(src) {
		return 0, false, false
	}
	switch src[end] {
	case ']':
		return end + 1, false, true
	case ',':
		return end + 1, true, true
	}
	return 0, false, false
}

// hasNameString is hasName for a name given as a string.
func hasNameString(src []byte, i int, name string) bool {
	j := i + 1 + len(name)
	return j < len(src) && src[i] == '"' && src[j] == '"' && string(src[i+1:j]) == name
}

// elementEnd returns the index after the list element that starts at
// src[i] (an object) and goes on at src[j] (after one of its members, or
// its first): its span's end when the route handed it over, else as
// read.
func (l *leaner) elementEnd(i, j int) int {
	if e := l.elements.end(i); e != 0 {
		return e
	}
	return objectEnd(l.src, j)
}
