package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/graph/jsonw"
)

// field is one member of an ordered JSON object.
type field struct {
	Key   string
	Value any
}

// object is a JSON object whose members are written in order, so envelopes
// read the way the contract lists them (and golden files stay stable).
type object []field

// MarshalJSON writes the members in order, as json.Marshal would. Pieces
// of an operation's data (raw, spliced) are copied as they are: the
// executor wrote them HTML-safe already, and a page of full events is tens
// of kilobytes that scanning again would cost more than the rest of the
// envelope (see tests/bench/NOTES.md).
func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(o.sizeHint())
	if err := o.appendJSON(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (o object) appendJSON(buf *bytes.Buffer) error {
	buf.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(f.Key)
		if err != nil {
			return err
		}
		buf.Write(k)
		buf.WriteByte(':')
		switch v := f.Value.(type) {
		case raw:
			v.appendJSON(buf)
		case []spliced:
			buf.WriteByte('[')
			for i, s := range v {
				if i > 0 {
					buf.WriteByte(',')
				}
				s.appendJSON(buf)
			}
			buf.WriteByte(']')
		case spliced:
			v.appendJSON(buf)
		case object:
			if err := v.appendJSON(buf); err != nil {
				return fmt.Errorf("error encoding %s: %w", f.Key, err)
			}
		default:
			b, err := json.Marshal(f.Value)
			if err != nil {
				return fmt.Errorf("error encoding %s: %w", f.Key, err)
			}
			buf.Write(b)
		}
	}
	buf.WriteByte('}')
	return nil
}

// sizeHint estimates the encoded size so the buffer grows once.
func (o object) sizeHint() int {
	n := 3 // braces and the body's newline
	for _, f := range o {
		n += len(f.Key) + 16
		switch v := f.Value.(type) {
		case raw:
			n += len(v)
		case spliced:
			n += v.size()
		case []spliced:
			for _, s := range v {
				n += s.size() + 1
			}
		case object:
			n += v.sizeHint()
		}
	}
	return n
}

// raw is a value of an operation's data: compact JSON, HTML-safe (the
// executor writes the facade's data so), copied as it is. Empty is null.
type raw []byte

func (r raw) appendJSON(buf *bytes.Buffer) {
	if len(r) == 0 {
		buf.WriteString("null")
		return
	}
	buf.Write(r)
}

// isNull reports whether r is absent or the JSON null.
func (r raw) isNull() bool { return len(r) == 0 || string(r) == "null" }

// orEmptyList turns null into [] so data lists are always arrays.
func (r raw) orEmptyList() raw {
	if r.isNull() {
		return raw("[]")
	}
	return r
}

// spliced is an object of the data with members appended (a match's
// fields after its entity's or event's): written as obj without its
// closing brace, then extra's members.
type spliced struct {
	obj   raw
	extra object
}

func (s spliced) appendJSON(buf *bytes.Buffer) {
	obj := s.obj
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		obj = raw("{}") // never from the executor: a match's object is non-null
	}
	buf.Write(obj[:len(obj)-1])
	for i, f := range s.extra {
		if i > 0 || len(obj) > 2 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(f.Key)
		buf.Write(k)
		buf.WriteByte(':')
		f.Value.(raw).appendJSON(buf)
	}
	buf.WriteByte('}')
}

func (s spliced) size() int {
	n := len(s.obj)
	for _, f := range s.extra {
		n += len(f.Key) + 4 + len(f.Value.(raw))
	}
	return n
}

// Data is an operation's data as an envelope reads it: the bytes the
// executor wrote (compact JSON, HTML-safe) and the marks it left on the
// values an envelope may want (jsonw.Writer.Marks: every member reached
// without crossing a list, and the elements of a root field's list and
// their members), so that an envelope picks what it needs and never scans
// the data again.
type Data struct {
	marks []jsonw.Mark
	b     []byte
}

// newData returns the data written in b with its marks.
func newData(b []byte, marks []jsonw.Mark) *Data { return &Data{b: b, marks: marks} }

// Get returns the value at path — response keys joined by "." from the
// root ("events.nodes"), crossing no list — or null when there is none
// (a null or missing object on the way).
func (d *Data) Get(path string) raw {
	// A value's members are marked before it, so a root field's mark
	// comes after everything below it: look from the end.
	for i := len(d.marks) - 1; i >= 0; i-- {
		if m := d.marks[i]; m.Path == path {
			return raw(d.b[m.Start:m.End])
		}
	}
	return raw("null")
}

// Items returns the object elements of the list of root field key, each
// with its members, in order.
func (d *Data) Items(key string) []Item {
	var (
		items []Item
		from  int
	)
	elem := key + "[]"
	for i, m := range d.marks {
		if m.Path == elem {
			items = append(items, Item{d: d, span: m, members: d.marks[from:i], prefix: len(elem) + 1})
			from = i + 1
		} else if !strings.HasPrefix(m.Path, elem) {
			from = i + 1
		}
	}
	return items
}

// Item is an element of a root field's list (Data.Items).
type Item struct {
	d       *Data
	span    jsonw.Mark
	members []jsonw.Mark
	prefix  int
}

// Get returns the element's member key (crossing no list), or null.
func (it Item) Get(key string) raw {
	for _, m := range it.members {
		if len(m.Path) == it.prefix+len(key) && m.Path[it.prefix:] == key {
			return raw(it.d.b[m.Start:m.End])
		}
	}
	return raw("null")
}

// dataList wraps the list at path as {"data": [...]}.
func dataList(path string) func(*Call, *Data) (any, error) {
	return func(_ *Call, d *Data) (any, error) {
		return object{{"data", d.Get(path).orEmptyList()}}, nil
	}
}

// pick returns the members of the object at path named by keys, as an
// ordered object.
func pick(d *Data, path string, keys ...string) object {
	o := make(object, 0, len(keys))
	for _, k := range keys {
		o = append(o, field{k, d.Get(path + "." + k)})
	}
	return o
}

// flattenMatches turns the list of root field key, [{<inner>: {...}, m1:
// v1, ...}], into [{..., m1: v1, ...}]: each inner object with the match
// fields appended in the order matchFields lists them.
func flattenMatches(d *Data, key, inner string, matchFields ...string) []spliced {
	items := d.Items(key)
	out := make([]spliced, len(items))
	for i, it := range items {
		extra := make(object, len(matchFields))
		for j, f := range matchFields {
			extra[j] = field{f, it.Get(f)}
		}
		out[i] = spliced{obj: it.Get(inner), extra: extra}
	}
	return out
}

// notFound is the 404 a route returns when its resource is null.
func notFound(msg string) error { return &cryptointel.Error{Code: cryptointel.ENOTFOUND, Message: msg} }
