// Command gen writes the code and the GraphQL fragments produced from the
// wire tables (wire.Objects): run by `go generate` in wire (the Go types
// and encoders, event_gen.go) and in rest (-fragments ops/fragments: the
// fragments the /v1 operations select events with).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cryptointel/cryptointel/wire"
)

func main() {
	out := flag.String("o", "event_gen.go", "the Go file to write")
	fragments := flag.String("fragments", "", "write the GraphQL fragments into this directory instead of the Go file")
	flag.Parse()
	if *fragments != "" {
		if err := writeFragments(*fragments); err != nil {
			log.Fatal(err)
		}
		return
	}
	src, err := goSource()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// object returns the object of the given Go name.
func object(name string) wire.Object {
	for _, o := range wire.Objects {
		if o.Name == name {
			return o
		}
	}
	log.Fatalf("no wire object %q", name)
	return wire.Object{}
}

// elem is the object a list type holds, "" for a scalar type.
func elem(t wire.Type) string {
	switch t {
	case wire.EntityRefs:
		return "EntityRef"
	case wire.EvidenceList:
		return "Evidence"
	}
	return ""
}

func goType(f wire.Field) string {
	var t string
	switch f.Type {
	case wire.Int:
		t = "int64"
	case wire.String:
		t = "string"
	case wire.Float:
		t = "float64"
	case wire.Time:
		t = "time.Time"
	case wire.Strings:
		t = "[]string"
	case wire.EntityRefs, wire.EvidenceList:
		t = "[]" + elem(f.Type)
	default:
		log.Fatalf("field %s: unknown type %q", f.Name, f.Type)
	}
	if f.Nullable {
		if strings.HasPrefix(t, "[]") {
			log.Fatalf("field %s: a nullable list is not supported", f.Name)
		}
		t = "*" + t
	}
	return t
}

func parquetTag(f wire.Field) string {
	tag := f.Name
	if f.Dict {
		tag += ",dict"
	}
	switch f.Type {
	case wire.Strings, wire.EntityRefs, wire.EvidenceList:
		tag += ",list"
	case wire.Time:
		tag += ",timestamp(millisecond)"
	}
	if f.Nullable {
		tag += ",optional"
	}
	return tag
}

// appendValue returns the statements appending field f of x as JSON.
func appendValue(f wire.Field) string {
	v := "x." + f.GoName()
	check := func(call string) string {
		return "if dst, err = " + call + "; err != nil {\n\treturn dst, err\n}\n"
	}
	switch f.Type {
	case wire.Int:
		if f.Nullable {
			log.Fatalf("field %s: a nullable Int is not supported", f.Name)
		}
		return "dst = strconv.AppendInt(dst, " + v + ", 10)\n"
	case wire.String:
		if f.Nullable {
			log.Fatalf("field %s: a nullable String is not supported", f.Name)
		}
		return "dst = AppendString(dst, " + v + ", enc.EscapeHTML)\n"
	case wire.Float:
		if f.Nullable {
			return check("AppendNullableFloat(dst, " + v + ")")
		}
		return check("AppendFloat(dst, " + v + ")")
	case wire.Time:
		if f.Nullable {
			log.Fatalf("field %s: a nullable Time is not supported", f.Name)
		}
		return check("AppendTime(dst, " + v + ", enc.TimeLayout)")
	case wire.Strings:
		return "dst = AppendStrings(dst, " + v + ", enc.EscapeHTML)\n"
	case wire.EntityRefs, wire.EvidenceList:
		return check("append" + elem(f.Type) + "List(dst, " + v + ", enc)")
	}
	log.Fatalf("field %s: unknown type %q", f.Name, f.Type)
	return ""
}

// csvValue returns the expression of field f of x as a CSV cell.
func csvValue(f wire.Field) string {
	v := "x." + f.GoName()
	switch f.Type {
	case wire.Int:
		return "strconv.FormatInt(" + v + ", 10)"
	case wire.String:
		return v
	case wire.Float:
		if f.Nullable {
			return "CSVFloat(" + v + ")"
		}
		return "CSVFloat(&" + v + ")"
	case wire.Time:
		return "CSVTime(" + v + ", CSV.TimeLayout)"
	case wire.Strings:
		return "CSVStrings(" + v + ")"
	case wire.EntityRefs, wire.EvidenceList:
		o := object(elem(f.Type))
		var value wire.Field
		for _, g := range o.Fields {
			if g.Name == o.CSVValue {
				value = g
			}
		}
		if value.Name == "" || value.Type != wire.String {
			log.Fatalf("object %s: CSVValue %q is not a String field", o.Name, o.CSVValue)
		}
		return "CSVPairs(sb, len(" + v + "), func(i int) (int64, string) { return " + v + "[i].ID, " + v + "[i]." + value.GoName() + " })"
	}
	log.Fatalf("field %s: unknown type %q", f.Name, f.Type)
	return ""
}

func hasOnRequest(o wire.Object) bool {
	for _, f := range o.Fields {
		if f.OnRequest {
			return true
		}
	}
	return false
}

func goSource() ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	for _, o := range wire.Objects {
		table := o.Name + "Fields"
		role := "the row type of the Parquet event export"
		if o.Name != "Event" {
			role = "its group in the Parquet event export"
		}
		p("// %s is the Go form of the wire object whose fields are %s,\n// in that order; it is also %s.\n", o.Name, table, role)
		p("type %s struct {\n", o.Name)
		for _, f := range o.Fields {
			p("\t// %s is %q: %s Source: %s.\n", f.GoName(), f.Name, f.Description, f.Source)
			p("\t%s %s `parquet:%q`\n", f.GoName(), goType(f), parquetTag(f))
		}
		p("}\n\n")

		onRequest := hasOnRequest(o)
		if o.Fields[0].OnRequest {
			return nil, fmt.Errorf("object %s: the first field cannot be OnRequest", o.Name)
		}
		nLegacy := 0
		for _, f := range o.Fields {
			if f.Legacy != "" {
				nLegacy++
			}
		}
		p("// AppendJSON appends x to dst as a JSON object in encoding enc: the\n// fields of %s in order", table)
		switch {
		case onRequest && nLegacy > 0:
			p(" (those marked OnRequest only when\n// onRequest is set), then, when enc.Legacy, their legacy aliases\n// with the same values.\n")
		case nLegacy > 0:
			p(", then, when enc.Legacy, their\n// legacy aliases with the same values.\n")
		case onRequest:
			p(" (those marked OnRequest only when\n// onRequest is set).\n")
		default:
			p(".\n")
		}
		params := "dst []byte, enc *Encoding"
		if onRequest {
			params += ", onRequest bool"
		}
		p("func (x *%s) AppendJSON(%s) ([]byte, error) {\n", o.Name, params)
		body := ""
		for _, f := range o.Fields {
			body += appendValue(f)
		}
		if strings.Contains(body, "err =") {
			p("\tvar err error\n")
		}
		if nLegacy > 0 {
			p("\tvar legacy [%d][2]int // each legacy alias's canonical value in dst\n", nLegacy)
		}
		li := 0
		for i, f := range o.Fields {
			key := strconv.Quote(f.Name) + ":"
			if i == 0 {
				key = "{" + key
			} else {
				key = "," + key
			}
			if f.OnRequest {
				p("\tif onRequest {\n")
			}
			p("\tdst = append(dst, %s...)\n", strconv.Quote(key))
			if f.Legacy != "" {
				p("\tlegacy[%d][0] = len(dst)\n", li)
			}
			p("%s", indent(appendValue(f)))
			if f.Legacy != "" {
				p("\tlegacy[%d][1] = len(dst)\n", li)
				li++
			}
			if f.OnRequest {
				p("\t}\n")
			}
		}
		if nLegacy > 0 {
			p("\tif enc.Legacy {\n")
			li = 0
			for _, f := range o.Fields {
				if f.Legacy == "" {
					continue
				}
				p("\t\tif s := legacy[%d]; s[1] > 0 {\n", li)
				p("\t\t\tdst = append(dst, %s...)\n", strconv.Quote(","+strconv.Quote(f.Legacy)+":"))
				p("\t\t\tdst = append(dst, dst[s[0]:s[1]]...)\n\t\t}\n")
				li++
			}
			p("\t}\n")
		}
		p("\treturn append(dst, '}'), nil\n}\n\n")

		if o.Name != "Event" {
			p("// append%sList appends a JSON array of %s objects; nil is [].\n", o.Name, o.Name)
			p("func append%sList(dst []byte, xs []%s, enc *Encoding) ([]byte, error) {\n", o.Name, o.Name)
			p("\tdst = append(dst, '[')\n\tfor i := range xs {\n\t\tif i > 0 {\n\t\t\tdst = append(dst, ',')\n\t\t}\n")
			p("\t\tvar err error\n\t\tif dst, err = xs[i].AppendJSON(dst, enc); err != nil {\n\t\t\treturn dst, err\n\t\t}\n\t}\n")
			p("\treturn append(dst, ']'), nil\n}\n\n")
			continue
		}
		p("// %sCSVHeader is the header row of a csv export of %s objects: the\n// canonical names of %s.\n", o.Name, o.Name, table)
		p("var %sCSVHeader = []string{", o.Name)
		for i, f := range o.Fields {
			if i > 0 {
				p(", ")
			}
			p("%q", f.Name)
		}
		p("}\n\n")
		p("// AppendCSV appends to rec the cells of x in %sCSVHeader's order\n// (encoding CSV); sb is scratch space.\n", o.Name)
		p("func (x *%s) AppendCSV(rec []string, sb *strings.Builder) []string {\n\treturn append(rec,\n", o.Name)
		for _, f := range o.Fields {
			p("\t\t%s,\n", csvValue(f))
		}
		p("\t)\n}\n\n")
	}
	var imports []string
	for _, pkg := range []string{"strconv", "strings", "time"} {
		if bytes.Contains(b.Bytes(), []byte(pkg+".")) {
			imports = append(imports, strconv.Quote(pkg))
		}
	}
	head := "// Code generated by wire/gen from the tables in fields.go. DO NOT EDIT.\n\n" +
		"package wire\n\nimport (\n\t" + strings.Join(imports, "\n\t") + "\n)\n\n"
	src, err := format.Source(append([]byte(head), b.Bytes()...))
	if err != nil {
		return nil, fmt.Errorf("error formatting generated code: %w\n%s", err, b.String())
	}
	return src, nil
}

func indent(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "\t" + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// writeFragments writes one GraphQL fragment per wire object, selecting
// its fields (<Name>Fields), and the compact event's (EventCompactFields).
// An event's fragment then selects each legacy alias of a field it has as
// a GraphQL alias of that field, in table order, when the operation's
// $legacy is true: the one place the /v1 shape's legacy aliases are
// written. The executor writes a repeated field once and copies its bytes.
func writeFragments(dir string) error {
	write := func(name, graphqlType, doc string, fields []wire.Field, legacy bool) error {
		var b bytes.Buffer
		fmt.Fprintf(&b, "# Generated by wire/gen from the wire tables (wire/fields.go). DO NOT EDIT.\n")
		for _, l := range strings.Split(doc, "\n") {
			fmt.Fprintf(&b, "# %s\n", l)
		}
		fmt.Fprintf(&b, "fragment %s on %s {\n", name, graphqlType)
		selection := func(prefix string, f wire.Field, directive string) {
			if e := elem(f.Type); e != "" {
				fmt.Fprintf(&b, "  %s%s%s {\n    ...%sFields\n  }\n", prefix, f.Name, directive, e)
			} else {
				fmt.Fprintf(&b, "  %s%s%s\n", prefix, f.Name, directive)
			}
		}
		for _, f := range fields {
			selection("", f, "")
		}
		if legacy {
			for _, f := range fields {
				if f.Legacy != "" {
					selection(f.Legacy+": ", f, " @include(if: $legacy)")
				}
			}
		}
		b.WriteString("}\n")
		return os.WriteFile(filepath.Join(dir, name+".graphql"), b.Bytes(), 0o644)
	}
	legacyDoc := "\nThen the legacy aliases (contract section 2.1) of the fields selected,\nunless the operation's $legacy is false."
	for _, o := range wire.Objects {
		doc := fmt.Sprintf("The canonical fields of wire.%sFields.", o.Name)
		legacy := o.Name == "Event"
		if legacy {
			doc += legacyDoc
		}
		if err := write(o.Name+"Fields", o.GraphQL, doc, o.Fields, legacy); err != nil {
			return err
		}
	}
	var compact []wire.Field
	for _, f := range wire.EventFields {
		if f.Compact {
			compact = append(compact, f)
		}
	}
	return write("EventCompactFields", "Event",
		"A brief item in compact mode: the wire.EventFields marked Compact."+legacyDoc, compact, true)
}
