package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/cryptointel/cryptointel/graph/jsonw"
)

// field is one member of an ordered JSON object.
type field struct {
	Key   string
	Value any
}

// object is a JSON object whose members are written in order, so a
// handler's body reads the way the contract lists them (and golden files
// stay stable). A graph route's body is written from its operation's
// shape instead (shape.go).
type object []field

// MarshalJSON writes the members in order, as json.Marshal would. Pieces
// of an operation's data (raw) are copied as they are: the
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

// Data is an operation's data as its shape reads it: the bytes the
// executor wrote (compact JSON, HTML-safe) and the marks it left on the
// values (jsonw.Writer.Marks: every member reached without crossing a
// list, and the elements of a root field's list and their members), so
// that the body is written from them without scanning the data again.
type Data struct {
	marks []jsonw.Mark
	b     []byte
	// elements are the spans of the object elements of the lists the
	// marks leave out (jsonw.Writer.Spans), when the writer recorded them.
	elements []jsonw.Span
	// copying records where the body copies pieces of the data (copies),
	// for spans.
	copying bool
	copies  []copied
}

// copied is a piece of the data, b[from:from+n], that the body copies
// at offset to.
type copied struct{ from, to, n int }

// copiesPool keeps the copies' arrays from one call that records them to
// the next (a page's body copies a few hundred pieces).
var copiesPool = sync.Pool{New: func() any { return new([]copied) }}

// newData returns the data written in b with its marks.
func newData(b []byte, marks []jsonw.Mark) *Data { return &Data{b: b, marks: marks} }

// Get returns the value at path — response keys joined by "." from the
// root ("events.nodes"), crossing no list — or null when there is none
// (a null or missing object on the way).
func (d *Data) Get(path string) raw {
	if v, ok := d.lookup(path); ok {
		return v
	}
	return raw("null")
}

// lookup returns the value at path and whether the data holds one (a
// field an @include left out, or below a null object, is not held).
func (d *Data) lookup(path string) (raw, bool) {
	// A value's members are marked before it, so a root field's mark
	// comes after everything below it: look from the end.
	for i := len(d.marks) - 1; i >= 0; i-- {
		if m := d.marks[i]; m.Path == path {
			return raw(d.b[m.Start:m.End]), true
		}
	}
	return nil, false
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
			items = append(items, Item{d: d, members: d.marks[from:i], prefix: len(elem) + 1})
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
	members []jsonw.Mark
	prefix  int
	// next is where the next lookup starts: the members are written
	// mostly in the order they were marked, so a lookup usually finds its
	// member at once instead of scanning the element's marks again.
	next int
}

// lookup returns the element's member at path (crossing no list) and
// whether the element holds one. It looks from where the last lookup
// found its member, round to where it started, so the order of lookups
// changes only their cost.
func (it *Item) lookup(path string) (raw, bool) {
	n := len(it.members)
	for k, i := 0, it.next; k < n; k, i = k+1, i+1 {
		if i == n {
			i = 0
		}
		if m := it.members[i]; len(m.Path) == it.prefix+len(path) && m.Path[it.prefix:] == path {
			it.next = i + 1
			return raw(it.d.b[m.Start:m.End]), true
		}
	}
	return nil, false
}

// put writes v, a value of the data or a piece of one (or a value of its
// own), into the body, noting where a piece of the data went when the
// data records its copies.
func (w *bodyWriter) put(v raw) {
	if d := w.d; d.copying && len(v) > 0 && len(d.b) > 0 {
		// v is a piece of d.b when it starts inside it.
		from := int(uintptr(unsafe.Pointer(unsafe.SliceData(v))) - uintptr(unsafe.Pointer(unsafe.SliceData(d.b))))
		if from >= 0 && from+len(v) <= len(d.b) {
			d.copies = append(d.copies, copied{from: from, to: len(w.b), n: len(v)})
		}
	}
	w.b = append(w.b, v...)
}

// spans returns the spans of the elements (Data.elements) that the body
// copied whole, moved to where the body holds them, in the order they
// were recorded: each element once, however often it was copied. It
// reuses the elements' array: the data reads them no more.
func (d *Data) spans() []jsonw.Span {
	cs := d.copies
	// By where they start in the data: the body copies the data mostly in
	// its order, so this is a pass that moves nothing.
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].from < cs[j-1].from; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
	// Pieces that overlap an earlier one are left out: a value copied
	// twice keeps its first place.
	k := 0
	for i, c := range cs {
		if i > 0 && k > 0 && c.from < cs[k-1].from+cs[k-1].n {
			continue
		}
		cs[k] = c
		k++
	}
	cs = cs[:k]
	// An element's span is recorded once it is written, so the spans come
	// in the order their elements end, and the piece that holds each is
	// at or after the last one's.
	out := d.elements[:0]
	p := 0
	for _, s := range d.elements {
		start, end := int(s.Start), int(s.End)
		for p < len(cs) && cs[p].from+cs[p].n < end {
			p++
		}
		if p == len(cs) {
			break
		}
		if c := cs[p]; c.from <= start && end <= c.from+c.n {
			delta := int32(c.to - c.from)
			out = append(out, jsonw.Span{Start: s.Start + delta, End: s.End + delta})
		}
	}
	d.elements = nil
	return out
}
