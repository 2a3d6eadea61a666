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
func hasEvents(result []byte) bool { return bytes.Contains(result, []byte(eventMemberPrefix)) }

// holdsEvents is hasEvents for a raw value.
func holdsEvents(raw string) bool { return strings.Contains(raw, eventMemberPrefix) }

// eventMemberPrefix starts the marker member of an event.
const eventMemberPrefix = `"` + eventMarker + `":`

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
		case e.IsObject() && holdsEvents(e.Raw):
			renderObject(b, indent, prefix+key.Str+".", e)
		case e.IsArray() && holdsEvents(e.Raw):
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

// eventFields are the members of an event the text shows.
type eventFields struct {
	id, at, category, subcategory, significance, matchedVia, matchType gjson.Result
	title, summary, owners, participants, bullets, evidence            gjson.Result
}

// renderEvent writes one event: a heading line (number, id, time,
// category, significance, how it matched), its title and summary, and
// what the full form adds (owners, participants, bullets, evidence) when
// present. One pass over the event's members.
func renderEvent(b *strings.Builder, indent string, i int, ev gjson.Result) {
	var f eventFields
	ev.ForEach(func(key, v gjson.Result) bool {
		switch key.Str {
		case "id":
			f.id = v
		case eventMarker:
			f.at = v
		case "eventCategory":
			f.category = v
		case "eventSubcategory":
			f.subcategory = v
		case "significance":
			f.significance = v
		case "matchedVia":
			f.matchedVia = v
		case "matchType":
			f.matchType = v
		case "title":
			f.title = v
		case "summary":
			f.summary = v
		case "owners":
			f.owners = v
		case "participants":
			f.participants = v
		case "bullets":
			f.bullets = v
		case "evidence":
			f.evidence = v
		}
		return true
	})
	in := indent + "   "
	b.WriteString(indent + strconv.Itoa(i) + ". #" + f.id.Raw)
	if t := f.at.Str; len(t) >= 16 {
		b.WriteString(" · " + t[:10] + " " + t[11:16] + "Z")
	}
	cat := f.category.Str
	if f.subcategory.Str != "" {
		cat += "/" + f.subcategory.Str
	}
	if cat != "" {
		b.WriteString(" · " + cat)
	}
	if f.significance.Type == gjson.Number {
		b.WriteString(" · significance " + f.significance.Raw)
	}
	if f.matchedVia.Type == gjson.String {
		b.WriteString(" · matchedVia " + f.matchedVia.Str)
	}
	if f.matchType.Type == gjson.String {
		b.WriteString(" · matchType " + f.matchType.Str)
	}
	b.WriteString("\n" + in + f.title.Str + "\n")
	if f.summary.Str != "" {
		b.WriteString(in + f.summary.Str + "\n")
	}
	if names := labels(f.owners); names != "" {
		b.WriteString(in + "owners: " + names + "\n")
	}
	if names := labels(f.participants); names != "" {
		b.WriteString(in + "participants: " + names + "\n")
	}
	if f.bullets.IsArray() {
		f.bullets.ForEach(func(_, s gjson.Result) bool {
			b.WriteString(in + "• " + s.Str + "\n")
			return true
		})
	}
	if f.evidence.IsArray() {
		n, newest := 0, ""
		f.evidence.ForEach(func(_, e gjson.Result) bool {
			if n == 0 {
				newest = e.Get("url").Str
			}
			n++
			return true
		})
		if n > 0 {
			b.WriteString(in + "evidence: " + plural(n, "post") + ", newest " + newest + "\n")
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
