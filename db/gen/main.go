// Command gen writes db/columns_gen.go, the table of columns of the domain
// types that db reads and writes on pgx: for each type, from its fields'
// `bun` tags (the one place a column is named; Bun's own reads use the same
// tags) and `db` options, the columns a read selects, their scan
// destinations and the instants put in UTC; for the types the ingest
// upserts, the row sent to PostgreSQL and its upsert statement (or its
// pieces, where the ingest also sets managed columns), in
// ingest/columns_gen.go beside the ingest's writes; and the conversion
// into the wire types of the fields the wire
// tables take from a column (wire.Field.Source "<table>.<column>").
//
// Field options, in a `db` tag: `noread` leaves the column out of reads (a
// search-only copy), `managed` out of upserts (the database or the
// statement writes it: sequence numbers, timestamps, counters). Adding a
// column is the migration, the field with its tag, and the ingest mapping;
// `go generate ./...` does the rest, and a field the code no longer
// matches fails to compile.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/wire"
)

// table is one domain type and how db uses it.
type table struct {
	typ   reflect.Type
	name  string // identifier prefix: event → eventColumns, eventDest…
	table string // the SQL table
	alias string // its alias in the reads
	// upsert: the ingest writes it (row type and statement pieces).
	upsert bool
	// setsManaged: the ingest's upsert also sets managed columns, so it is
	// written from pieces (<name>Written, …Values, …Record, …Set,
	// …Changed); any other upsert is whole (<name>Upsert).
	setsManaged bool
	// writeOnly: db reads it through no columns of its own (no reads are
	// written).
	writeOnly bool
	// wire is the wire object built from it, if any.
	wire *wire.Object
}

// column is one tagged field.
type column struct {
	field   reflect.StructField
	name    string
	pk      bool
	noread  bool
	managed bool
}

func main() {
	objects := map[string]*wire.Object{}
	for i := range wire.Objects {
		objects[wire.Objects[i].Name] = &wire.Objects[i]
	}
	tables := []table{
		{typ: reflect.TypeFor[cryptointel.Event](), name: "event", table: "events", alias: "e", upsert: true, setsManaged: true, wire: objects["Event"]},
		{typ: reflect.TypeFor[cryptointel.Entity](), name: "entity", table: "entities", alias: "n", upsert: true, setsManaged: true, wire: objects["EntityRef"]},
		{typ: reflect.TypeFor[cryptointel.Evidence](), name: "evidence", table: "evidence", alias: "v", upsert: true, wire: objects["Evidence"]},
		{typ: reflect.TypeFor[cryptointel.EntityRelationship](), name: "relationship", table: "relationships", alias: "y"},
		{typ: reflect.TypeFor[cryptointel.EventEntityRef](), name: "eventEntityRef", table: "event_entities", alias: "ee"},
		{typ: reflect.TypeFor[cryptointel.EntityEvent](), name: "entityEvent", table: "event_entities", alias: "k"},
		{typ: reflect.TypeFor[cryptointel.Market](), name: "market", table: "markets", alias: "mk"},
		{typ: reflect.TypeFor[cryptointel.MarketSubevent](), name: "subevent", table: "market_subevents", alias: "se"},
		{typ: reflect.TypeFor[cryptointel.MarketPost](), name: "marketPost", table: "market_posts", alias: "mp"},
		{typ: reflect.TypeFor[cryptointel.Relationship](), name: "relationship", table: "relationships", upsert: true, writeOnly: true},
		{typ: reflect.TypeFor[cryptointel.Reference](), name: "reference", table: "entity_references", upsert: true, writeOnly: true},
		{typ: reflect.TypeFor[cryptointel.EventEntity](), name: "eventEntity", table: "event_entities", upsert: true, setsManaged: true, writeOnly: true},
		{typ: reflect.TypeFor[cryptointel.Market](), name: "market", table: "markets", upsert: true, writeOnly: true},
		{typ: reflect.TypeFor[cryptointel.MarketSubevent](), name: "marketSubevent", table: "market_subevents", upsert: true, writeOnly: true},
		{typ: reflect.TypeFor[cryptointel.MarketPost](), name: "marketPost", table: "market_posts", upsert: true, writeOnly: true},
	}
	var body bytes.Buffer
	body.WriteString("// tableColumns are the columns of the tables the ingest writes, as the\n// domain types name and type them (format_type's spelling), checked against\n// the database by TestColumnsMatchTables.\nvar tableColumns = map[string][][2]string{\n")
	for _, t := range tables {
		if !t.upsert {
			continue
		}
		cols, err := t.columns()
		if err != nil {
			fmt.Fprintln(os.Stderr, "db/gen:", err)
			os.Exit(1)
		}
		var names []string
		for _, c := range cols {
			st, _ := sqlType(c.field.Type)
			if st == "timestamptz" {
				st = "timestamp with time zone"
			}
			names = append(names, fmt.Sprintf("{%q, %q}", c.name, st))
		}
		fmt.Fprintf(&body, "\t%q: {%s},\n", t.table, strings.Join(names, ", "))
	}
	body.WriteString("}\n\n")
	var upserts bytes.Buffer
	for _, t := range tables {
		if err := t.write(&body, &upserts); err != nil {
			fmt.Fprintln(os.Stderr, "db/gen:", err)
			os.Exit(1)
		}
	}
	writeGo("columns_gen.go", "db", &body, "github.com/cryptointel/cryptointel", "github.com/cryptointel/cryptointel/wire")
	writeGo("../ingest/columns_gen.go", "ingest", &upserts, "github.com/cryptointel/cryptointel", "github.com/cryptointel/cryptointel/wire")
}

// writeGo writes body as the generated file path of package pkg importing
// imports (and time when body names it).
func writeGo(path, pkg string, body *bytes.Buffer, imports ...string) {
	var b bytes.Buffer
	b.WriteString("// Code generated by db/gen from the domain types' bun tags. DO NOT EDIT.\n\n")
	b.WriteString("package " + pkg + "\n\nimport (\n")
	if bytes.Contains(body.Bytes(), []byte("time.Time")) {
		b.WriteString("\t\"time\"\n\n")
	}
	for _, imp := range imports {
		b.WriteString("\t\"" + imp + "\"\n")
	}
	b.WriteString(")\n\n")
	b.Write(body.Bytes())
	out, err := format.Source(b.Bytes())
	if err != nil {
		os.WriteFile(path, b.Bytes(), 0o644) //nolint:errcheck
		fmt.Fprintln(os.Stderr, "db/gen: error formatting "+path+":", err)
		os.Exit(1)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "db/gen:", err)
		os.Exit(1)
	}
}

// columns are t's tagged fields in declaration order, those of embedded
// structs (but Bun's model marker) where they are embedded.
func (t table) columns() ([]column, error) {
	cols, err := fieldColumns(t.typ)
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("%s has no bun-tagged fields", t.typ.Name())
	}
	return cols, nil
}

func fieldColumns(typ reflect.Type) ([]column, error) {
	var cols []column
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag, ok := f.Tag.Lookup("bun")
		if f.Anonymous {
			if strings.HasPrefix(tag, "table:") {
				continue // bun.BaseModel
			}
			inner, err := fieldColumns(f.Type)
			if err != nil {
				return nil, err
			}
			cols = append(cols, inner...)
			continue
		}
		if !ok {
			continue
		}
		parts := strings.Split(tag, ",")
		if parts[0] == "-" || parts[0] == "" {
			continue
		}
		c := column{field: f, name: parts[0]}
		for _, o := range parts[1:] {
			if o == "pk" {
				c.pk = true
			}
		}
		for _, o := range strings.Split(f.Tag.Get("db"), ",") {
			switch o {
			case "":
			case "noread":
				c.noread = true
			case "managed":
				c.managed = true
			default:
				return nil, fmt.Errorf("%s.%s: unknown db option %q", typ.Name(), f.Name, o)
			}
		}
		if _, err := sqlType(f.Type); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", typ.Name(), f.Name, err)
		}
		cols = append(cols, c)
	}
	return cols, nil
}

var timeType = reflect.TypeFor[time.Time]()

// sqlType is the PostgreSQL type of a field's values (the column types of
// the upsert's jsonb_to_recordset).
func sqlType(t reflect.Type) (string, error) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return "timestamptz", nil
	case t.Kind() == reflect.Int64:
		return "bigint", nil
	case t.Kind() == reflect.Int:
		return "integer", nil
	case t.Kind() == reflect.String:
		return "text", nil
	case t.Kind() == reflect.Bool:
		return "boolean", nil
	case t.Kind() == reflect.Float64:
		return "double precision", nil
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "text[]", nil
	}
	return "", fmt.Errorf("no column type for %s", t)
}

func exported(name string) string { return strings.ToUpper(name[:1]) + name[1:] }

func (t table) write(b, upserts *bytes.Buffer) error {
	cols, err := t.columns()
	if err != nil {
		return err
	}
	goType := "cryptointel." + t.typ.Name()
	var read []column
	for _, c := range cols {
		if !c.noread {
			read = append(read, c)
		}
	}
	if t.upsert {
		t.writeUpsert(upserts, cols, goType)
	}
	if t.writeOnly {
		return nil
	}
	// Reads.
	names := make([]string, len(read))
	dests := make([]string, len(read))
	for i, c := range read {
		names[i] = t.alias + "." + c.name
		dests[i] = "&x." + c.field.Name
	}
	fmt.Fprintf(b, "// %sColumns are the %s columns a read selects (alias %s), in %sDest's\n// order.\n", t.name, t.table, t.alias, t.name)
	fmt.Fprintf(b, "const %sColumns = %q\n\n", t.name, strings.Join(names, ", "))
	fmt.Fprintf(b, "// %sDest appends the scan destinations of %sColumns in x to dst.\n", t.name, t.name)
	fmt.Fprintf(b, "func %sDest(x *%s, dst []any) []any {\n\treturn append(dst, %s)\n}\n\n", t.name, goType, strings.Join(dests, ", "))
	fmt.Fprintf(b, "// utc%s puts x's instants in UTC.\nfunc utc%s(x *%s) {\n", exported(t.name), exported(t.name), goType)
	for _, c := range read {
		switch c.field.Type {
		case timeType:
			fmt.Fprintf(b, "\tx.%[1]s = x.%[1]s.UTC()\n", c.field.Name)
		case reflect.PointerTo(timeType):
			fmt.Fprintf(b, "\tif x.%[1]s != nil {\n\t\tt := x.%[1]s.UTC()\n\t\tx.%[1]s = &t\n\t}\n", c.field.Name)
		}
	}
	b.WriteString("}\n\n")

	if t.wire != nil {
		if err := t.writeWire(b, read, goType); err != nil {
			return err
		}
	}
	return nil
}

// writeUpsert writes the ingest's row type and statement pieces.
func (t table) writeUpsert(b *bytes.Buffer, cols []column, goType string) {
	var written []column
	for _, c := range cols {
		if !c.managed {
			written = append(written, c)
		}
	}
	fmt.Fprintf(b, "// %sRow is a %s as the ingest sends it to PostgreSQL: its written\n// columns, a JSON object per row expanded with jsonb_to_recordset.\n", t.name, goType)
	fmt.Fprintf(b, "type %sRow struct {\n", t.name)
	for _, c := range written {
		fmt.Fprintf(b, "\t%s %s `json:%q`\n", c.field.Name, c.field.Type.String(), c.name)
	}
	b.WriteString("}\n\n")
	fmt.Fprintf(b, "// %sRowOf is x's row (lists never null: the columns are NOT NULL).\n", t.name)
	fmt.Fprintf(b, "func %sRowOf(x *%s) %sRow {\n\treturn %sRow{\n", t.name, goType, t.name, t.name)
	for _, c := range written {
		if c.field.Type.Kind() == reflect.Slice {
			fmt.Fprintf(b, "\t\t%[1]s: wire.NonNil(x.%[1]s),\n", c.field.Name)
		} else {
			fmt.Fprintf(b, "\t\t%[1]s: x.%[1]s,\n", c.field.Name)
		}
	}
	b.WriteString("\t}\n}\n\n")
	var names, values, types, set, old, new, pk []string
	for _, c := range written {
		if c.pk {
			pk = append(pk, c.name)
		}
		st, _ := sqlType(c.field.Type)
		names = append(names, c.name)
		values = append(values, "x."+c.name)
		types = append(types, c.name+" "+st)
		if !c.pk {
			set = append(set, c.name+" = EXCLUDED."+c.name)
			old = append(old, "t."+c.name)
			new = append(new, "EXCLUDED."+c.name)
		}
	}
	changed := "(" + strings.Join(old, ", ") + ") IS DISTINCT FROM (" + strings.Join(new, ", ") + ")"
	if !t.setsManaged {
		fmt.Fprintf(b, "// %sUpsert is the upsert of a batch of %s rows ($1, a JSON array of\n// %sRow): a row is updated only when a column changes. A statement\n// appends its RETURNING.\n", t.name, t.table, t.name)
		fmt.Fprintf(b, "const %sUpsert = %q\n\n", t.name, "INSERT INTO "+t.table+" AS t ("+strings.Join(names, ", ")+") SELECT "+strings.Join(values, ", ")+
			" FROM jsonb_to_recordset($1::jsonb) AS x("+strings.Join(types, ", ")+") ON CONFLICT ("+strings.Join(pk, ", ")+") DO UPDATE SET "+strings.Join(set, ", ")+" WHERE "+changed)
		return
	}
	fmt.Fprintf(b, "// The pieces of the %s upsert: INSERT INTO %s AS t (%sWritten) SELECT\n", t.table, t.table, t.name)
	fmt.Fprintf(b, "// %sValues FROM jsonb_to_recordset($1::jsonb) AS x(%sRecord) ON CONFLICT\n", t.name, t.name)
	fmt.Fprintf(b, "// DO UPDATE SET %sSet WHERE %sChanged.\n", t.name, t.name)
	b.WriteString("const (\n")
	fmt.Fprintf(b, "\t%sWritten = %q\n", t.name, strings.Join(names, ", "))
	fmt.Fprintf(b, "\t%sValues = %q\n", t.name, strings.Join(values, ", "))
	fmt.Fprintf(b, "\t%sRecord = %q\n", t.name, strings.Join(types, ", "))
	fmt.Fprintf(b, "\t%sSet = %q\n", t.name, strings.Join(set, ", "))
	fmt.Fprintf(b, "\t%sChanged = %q\n", t.name, changed)
	b.WriteString(")\n\n")
}

// writeWire writes the conversion into the wire object of the fields
// whose Source is one of t's columns.
func (t table) writeWire(b *bytes.Buffer, read []column, goType string) error {
	byColumn := map[string]column{}
	for _, c := range read {
		byColumn[t.table+"."+c.name] = c
	}
	fmt.Fprintf(b, "// wire%s sets the fields of w that wire.%sFields take from a column of\n// %s (their Source) from x; lists are never null, instants are in UTC.\n", t.wire.Name, t.wire.Name, t.table)
	fmt.Fprintf(b, "func wire%s(w *wire.%s, x *%s) {\n", t.wire.Name, t.wire.Name, goType)
	n := 0
	for _, f := range t.wire.Fields {
		c, ok := byColumn[f.Source]
		if !ok {
			continue
		}
		n++
		switch {
		case c.field.Type == timeType:
			fmt.Fprintf(b, "\tw.%s = x.%s.UTC()\n", f.GoName(), c.field.Name)
		case c.field.Type.Kind() == reflect.Slice:
			fmt.Fprintf(b, "\tw.%s = wire.NonNil(x.%s)\n", f.GoName(), c.field.Name)
		default:
			fmt.Fprintf(b, "\tw.%s = x.%s\n", f.GoName(), c.field.Name)
		}
	}
	b.WriteString("}\n\n")
	if n == 0 {
		return fmt.Errorf("no field of wire.%sFields comes from a column of %s", t.wire.Name, t.table)
	}
	return nil
}
