package jsonw

import (
	"bytes"
	"errors"
)

// Which values are marked: every member whose path from the data's root
// crosses no list, and, for a root member holding a list, each element
// that is an object ("key[]") and every member below it that crosses no
// further list ("key[].member"). The executor marks them as it writes
// (graph's plans know them in advance); MarkData finds the same marks in
// data written by anyone else (gqlgen's reference executor), in the same
// order.

// errNotCompact is MarkData's error for bytes it does not read as compact
// JSON.
var errNotCompact = errors.New("jsonw: data is not compact JSON")

// MarkData returns the marks of data, an operation's compact JSON data
// object written at b[start:], as the executor would have recorded them
// writing it there.
func MarkData(b []byte, start int) ([]Mark, error) {
	m := marker{b: b}
	end, err := m.object(start, "", true, true)
	if err != nil {
		return nil, err
	}
	if end != len(b) {
		return nil, errNotCompact
	}
	return m.marks, nil
}

type marker struct {
	b     []byte
	marks []Mark
}

// object reads the object at b[i]; its members are marked under prefix when
// marked, and root says it is the data's root object.
func (m *marker) object(i int, prefix string, marked, root bool) (int, error) {
	if i >= len(m.b) || m.b[i] != '{' {
		return 0, errNotCompact
	}
	i++
	if i < len(m.b) && m.b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(m.b) || m.b[i] != '"' {
			return 0, errNotCompact
		}
		kend, ok := skipString(m.b, i)
		if !ok || kend >= len(m.b) || m.b[kend] != ':' {
			return 0, errNotCompact
		}
		key := string(m.b[i+1 : kend-1])
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		vstart := kend + 1
		var (
			end int
			err error
		)
		switch {
		case !marked:
			end, err = skipValue(m.b, vstart)
		case vstart < len(m.b) && m.b[vstart] == '{':
			end, err = m.object(vstart, path, true, false)
		case vstart < len(m.b) && m.b[vstart] == '[' && root:
			end, err = m.elements(vstart, path+"[]")
		default:
			end, err = skipValue(m.b, vstart)
		}
		if err != nil {
			return 0, err
		}
		if marked {
			m.marks = append(m.marks, Mark{Path: path, Start: vstart, End: end})
		}
		var closed bool
		if i, closed, err = m.separator(end, '}'); err != nil || closed {
			return i, err
		}
	}
}

// separator reads the comma or the closing bracket at b[i] and returns the
// index after it; closed reports the bracket.
func (m *marker) separator(i int, closing byte) (next int, closed bool, err error) {
	if i >= len(m.b) || (m.b[i] != ',' && m.b[i] != closing) {
		return 0, false, errNotCompact
	}
	return i + 1, m.b[i] == closing, nil
}

// elements reads the list at b[i], a root member's value: each element
// that is an object is marked under path, and so are its members.
func (m *marker) elements(i int, path string) (int, error) {
	i++
	if i < len(m.b) && m.b[i] == ']' {
		return i + 1, nil
	}
	for {
		var (
			end int
			err error
		)
		if i < len(m.b) && m.b[i] == '{' {
			if end, err = m.object(i, path, true, false); err == nil {
				m.marks = append(m.marks, Mark{Path: path, Start: i, End: end})
			}
		} else {
			end, err = skipValue(m.b, i)
		}
		if err != nil {
			return 0, err
		}
		var closed bool
		if i, closed, err = m.separator(end, ']'); err != nil || closed {
			return i, err
		}
	}
}

// skipValue returns the end of the compact JSON value at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errNotCompact
	}
	switch b[i] {
	case '"':
		end, ok := skipString(b, i)
		if !ok {
			return 0, errNotCompact
		}
		return end, nil
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, ok := skipString(b, i)
				if !ok {
					return 0, errNotCompact
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errNotCompact
	default:
		start := i
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
			i++
		}
		if i == start {
			return 0, errNotCompact
		}
		return i, nil
	}
}

// skipString returns the index after the string starting at b[i] (a
// quote), honouring backslash escapes.
func skipString(b []byte, i int) (int, bool) {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return 0, false
		}
		q := i + j
		n := 0
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		i = q + 1
	}
}
