package mcp

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// The text content beside a tool's structured content: what a client that
// shows a model only text gives it. Events become one short paragraph
// each; everything else is written as the compact JSON it is.

// hasEvents reports whether a result holds events.
func hasEvents(result []byte) bool { return bytes.Contains(result, []byte(`"`+eventMarker+`":`)) }

// render writes the text of a tool's structured result.
func render(_ string, result []byte) string {
	if !hasEvents(result) {
		return string(result)
	}
	var b strings.Builder
	renderObject(&b, "", "", gjson.ParseBytes(result))
	return strings.TrimRight(b.String(), "\n")
}

// renderObject writes an object's members: scalars as "name: value",
// event lists as paragraphs, objects that hold events recursively, and
// anything else as compact JSON.
func renderObject(b *strings.Builder, indent, prefix string, v gjson.Result) {
	v.ForEach(func(key, e gjson.Result) bool {
		name := indent + prefix + key.Str
		switch {
		case isEventList(e):
			b.WriteString(name + ": " + plural(int(e.Get("#").Int()), "event") + "\n")
			i := 0
			e.ForEach(func(_, ev gjson.Result) bool {
				i++
				renderEvent(b, indent, i, ev)
				return true
			})
		case e.IsObject() && hasEvents([]byte(e.Raw)):
			renderObject(b, indent, prefix+key.Str+".", e)
		case e.IsArray() && hasEvents([]byte(e.Raw)):
			i := 0
			e.ForEach(func(_, item gjson.Result) bool {
				label := name + "[" + strconv.Itoa(i) + "]"
				if l := item.Get("label"); l.Type == gjson.String {
					label += " " + l.Str
				}
				b.WriteString(label + "\n")
				renderObject(b, indent+"  ", "", item)
				i++
				return true
			})
		case e.Type == gjson.String:
			b.WriteString(name + ": " + e.Str + "\n")
		default:
			b.WriteString(name + ": " + e.Raw + "\n")
		}
		return true
	})
}

// isEventList reports whether v is a non-empty list of events.
func isEventList(v gjson.Result) bool {
	return v.IsArray() && v.Get("0."+eventMarker).Exists()
}

// renderEvent writes one event: a heading line (number, id, time,
// category, significance, title), its summary, and what the full form
// adds (owners, participants, bullets, evidence) when present.
func renderEvent(b *strings.Builder, indent string, i int, ev gjson.Result) {
	in := indent + "   "
	b.WriteString(indent + strconv.Itoa(i) + ". #" + ev.Get("id").Raw)
	if t := ev.Get(eventMarker).Str; len(t) >= 16 {
		b.WriteString(" · " + t[:10] + " " + t[11:16] + "Z")
	}
	cat := ev.Get("eventCategory").Str
	if sub := ev.Get("eventSubcategory").Str; sub != "" {
		cat += "/" + sub
	}
	if cat != "" {
		b.WriteString(" · " + cat)
	}
	if s := ev.Get("significance"); s.Type == gjson.Number {
		b.WriteString(" · significance " + s.Raw)
	}
	for _, m := range []string{"matchedVia", "matchType"} {
		if s := ev.Get(m); s.Type == gjson.String {
			b.WriteString(" · " + m + " " + s.Str)
		}
	}
	b.WriteString("\n" + in + ev.Get("title").Str + "\n")
	if s := ev.Get("summary").Str; s != "" {
		b.WriteString(in + s + "\n")
	}
	for _, list := range []string{"owners", "participants"} {
		if names := labels(ev.Get(list)); names != "" {
			b.WriteString(in + list + ": " + names + "\n")
		}
	}
	if bl := ev.Get("bullets"); bl.IsArray() {
		bl.ForEach(func(_, s gjson.Result) bool {
			b.WriteString(in + "• " + s.Str + "\n")
			return true
		})
	}
	if evd := ev.Get("evidence"); evd.IsArray() {
		if n := int(evd.Get("#").Int()); n > 0 {
			b.WriteString(in + "evidence: " + plural(n, "post") + ", newest " + evd.Get("0.url").Str + "\n")
		}
	}
}

// labels writes a list of entity refs as "Label (id), …".
func labels(v gjson.Result) string {
	if !v.IsArray() {
		return ""
	}
	var out []string
	v.ForEach(func(_, e gjson.Result) bool {
		out = append(out, e.Get("label").Str+" ("+e.Get("id").Raw+")")
		return true
	})
	return strings.Join(out, ", ")
}
