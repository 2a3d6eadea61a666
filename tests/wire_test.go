package tests

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/ingest"
	"github.com/cryptointel/cryptointel/jobs"
	"github.com/cryptointel/cryptointel/wire"
)

// The event that TestEventWireShape follows through every encoding: every
// field set, two owners, a participant, two posts, whole milliseconds (so
// the webhook's full-precision instants equal the API's). Strings carry
// what the encodings escape differently (<, >, &, quotes, a newline, a
// comma, U+2028).
var (
	wireAt      = restNow.Add(-2 * time.Hour).Add(123 * time.Millisecond)
	wireSig     = 7.25
	wireEventID = int64(9100)
)

func wireFixture() []string {
	ev := map[string]any{
		"kind": ingest.KindEvent, "id": wireEventID,
		"title":            `Wire <b>"shape"</b> & co, line` + "\u2028two",
		"eventCategory":    "partnership",
		"eventSubcategory": "joint_venture",
		"summary":          "A summary,\nwith a newline & <tag>.",
		"bullets":          []string{"first, point", `second "point"`},
		"owners":           []int64{9001, 9002},
		"participants":     []int64{9003},
		"evidence": []map[string]any{
			{"id": 91001, "content": "older <post>", "url": "https://example.org/w/1?a=1&b=2", "timestamp": wireAt.Add(-time.Hour)},
			{"id": 91002, "content": "newer post", "url": "https://example.org/w/2", "timestamp": wireAt},
		},
		"significance": wireSig,
	}
	b, _ := json.Marshal(ev)
	return []string{
		`{"kind":"entity","id":9001,"canonicalName":"Wire Alpha","displayName":"Alpha & Co","entityType":"project","aliases":["WA","ALPHA"]}`,
		`{"kind":"entity","id":9002,"canonicalName":"Wire Beta","entityType":"exchange","aliases":[]}`,
		`{"kind":"entity","id":9003,"canonicalName":"Wire Gamma","entityType":"fund","aliases":["GAM"]}`,
		string(b),
	}
}

// wireWant is the fixture event in its Go wire form.
func wireWant() wire.Event {
	sig := wireSig
	return wire.Event{
		ID: wireEventID, Title: `Wire <b>"shape"</b> & co, line` + "\u2028two",
		EventCategory: "partnership", EventSubcategory: "joint_venture",
		Summary: "A summary,\nwith a newline & <tag>.",
		Bullets: []string{"first, point", `second "point"`},
		Owners: []wire.EntityRef{
			{ID: 9001, Label: "Alpha & Co", Type: "project", Aliases: []string{"WA", "ALPHA"}},
			{ID: 9002, Label: "Wire Beta", Type: "exchange", Aliases: []string{}},
		},
		Participants: []wire.EntityRef{{ID: 9003, Label: "Wire Gamma", Type: "fund", Aliases: []string{"GAM"}}},
		Evidence: []wire.Evidence{
			{ID: 91002, Content: "newer post", URL: "https://example.org/w/2", Timestamp: wireAt},
			{ID: 91001, Content: "older <post>", URL: "https://example.org/w/1?a=1&b=2", Timestamp: wireAt.Add(-time.Hour)},
		},
		LatestEvidenceTimestamp: wireAt,
		Significance:            &sig,
	}
}

// TestEventWireShape walks every encoding of an event against the wire
// tables (wire.EventFields, wire.EntityRefFields, wire.EvidenceFields): the
// /v1 envelopes (full and compact), the GraphQL schema, the OpenAPI
// schemas, the webhook payload and the JSONL, CSV and Parquet exports. For
// each it checks the members or columns and their order against the
// tables, legacy aliases against their canonical values, and the values
// against the event that was ingested — so a field added to the tables
// fails here until every encoding and its data source carries it. (The
// benchmark floor's copy is checked in tests/bench.)
func TestEventWireShape(t *testing.T) {
	t.Parallel()
	s := startRESTServerWith(t, func(store *db.DB) { ingestLines(t, store, wireFixture()) },
		func(c *app.Config) { c.ExportDir = t.TempDir() })
	want := wireWant()

	t.Run("v1 event", func(t *testing.T) {
		t.Parallel()
		r := s.get(t, "/v1/latest?limit=25")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		got := checkWireObject(t, findWireEvent(t, r.Body), wire.EventFields, &wire.API, true)
		require.Equal(t, want, got)
	})

	t.Run("v1 compact event", func(t *testing.T) {
		t.Parallel()
		r := s.get(t, fmt.Sprintf("/v1/brief?id=9001&since=%s&compact=true", ts(-48*time.Hour)))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var compact []wire.Field
		for _, f := range wire.EventFields {
			if f.Compact {
				compact = append(compact, f)
			}
		}
		got := checkWireObject(t, findWireEvent(t, r.Body), compact, &wire.API, true)
		require.Equal(t, wire.Event{ID: want.ID, Title: want.Title, EventCategory: want.EventCategory,
			EventSubcategory: want.EventSubcategory, Summary: want.Summary,
			LatestEvidenceTimestamp: want.LatestEvidenceTimestamp, Significance: want.Significance}, got)
	})

	t.Run("graphql schema", func(t *testing.T) {
		t.Parallel()
		for _, o := range wire.Objects {
			fields := graphqlTypeFields(t, s, o.GraphQL)
			for _, f := range o.Fields {
				g, ok := fields[f.Name]
				require.True(t, ok, "GraphQL %s lacks %s", o.GraphQL, f.Name)
				require.Equal(t, graphqlWireType(f), g.typ, "GraphQL %s.%s type", o.GraphQL, f.Name)
				require.Equal(t, f.Description, g.description, "GraphQL %s.%s description", o.GraphQL, f.Name)
				require.False(t, g.deprecated, "GraphQL %s.%s", o.GraphQL, f.Name)
				if f.Legacy == "" {
					continue
				}
				l, ok := fields[f.Legacy]
				require.True(t, ok, "GraphQL %s lacks the legacy %s", o.GraphQL, f.Legacy)
				require.Equal(t, g.typ, l.typ, "GraphQL %s.%s type", o.GraphQL, f.Legacy)
				require.Equal(t, "Legacy name of "+f.Name+".", l.description)
				require.True(t, l.deprecated, "GraphQL %s.%s is deprecated", o.GraphQL, f.Legacy)
				require.Equal(t, "use "+f.Name, l.reason)
			}
		}
	})

	t.Run("graphql event", func(t *testing.T) {
		t.Parallel()
		// Select every canonical and legacy field, as the tables list them.
		var sel func(fields []wire.Field) string
		sel = func(fields []wire.Field) string {
			var parts []string
			for _, f := range fields {
				for _, name := range []string{f.Name, f.Legacy} {
					if name == "" {
						continue
					}
					switch f.Type {
					case wire.EntityRefs:
						name += " { " + sel(wire.EntityRefFields) + " }"
					case wire.EvidenceList:
						name += " { " + sel(wire.EvidenceFields) + " }"
					}
					parts = append(parts, name)
				}
			}
			return strings.Join(parts, " ")
		}
		q, err := json.Marshal(map[string]string{"query": "{ events(first: 25) { nodes { " + sel(wire.EventFields) + " } } }"})
		require.NoError(t, err)
		b := graphqlPost(t, s, q)
		// The executor writes members in selection order: canonical then
		// legacy per field, so check values rather than order.
		var out struct {
			Data struct {
				Events struct {
					Nodes []map[string]json.RawMessage `json:"nodes"`
				} `json:"events"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(b, &out), "%s", b)
		var node map[string]json.RawMessage
		for _, n := range out.Data.Events.Nodes {
			if string(n["id"]) == strconv.FormatInt(wireEventID, 10) {
				node = n
			}
		}
		require.NotNil(t, node, "%s", b)
		// Rebuild the object in wire order and check it like the others.
		var obj bytes.Buffer
		obj.WriteByte('{')
		for i, k := range wireKeys(wire.EventFields, &wire.API, true) {
			if i > 0 {
				obj.WriteByte(',')
			}
			obj.WriteString(strconv.Quote(k) + ":")
			obj.Write(node[k])
		}
		obj.WriteByte('}')
		require.Len(t, node, len(wireKeys(wire.EventFields, &wire.API, true)))
		require.Equal(t, want, checkWireObject(t, obj.Bytes(), wire.EventFields, &wire.API, true))
	})

	t.Run("openapi schemas", func(t *testing.T) {
		t.Parallel()
		type shape struct {
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
			// An event is either shape: with its legacy aliases (the
			// default) or without them (legacy=false).
			AnyOf []shape `json:"anyOf"`
		}
		var doc struct {
			Components struct {
				Schemas map[string]shape `json:"schemas"`
			} `json:"components"`
		}
		require.NoError(t, json.Unmarshal(fetchOpenAPI(t, s), &doc))
		checkShape := func(name string, sch shape, fields []wire.Field, legacy bool) {
			enc := wire.API
			enc.Legacy = legacy
			require.Equal(t, wireKeys(fields, &enc, true), sch.Required, "OpenAPI %s members (legacy aliases: %t)", name, legacy)
			require.Len(t, sch.Properties, len(sch.Required))
			for _, f := range fields {
				for _, name := range []string{f.Name, f.Legacy} {
					if name == "" || (name == f.Legacy && !legacy) {
						continue
					}
					pr := sch.Properties[name]
					require.Equal(t, openAPIWireType(f), pr["type"], "OpenAPI %s.%s type", name, f.Name)
					if name == f.Name {
						require.Equal(t, f.Description, pr["description"], "OpenAPI %s description", f.Name)
					}
				}
			}
		}
		check := func(name string, fields []wire.Field) {
			sch, ok := doc.Components.Schemas[name]
			require.True(t, ok, "OpenAPI lacks %s", name)
			if len(sch.AnyOf) == 0 {
				checkShape(name, sch, fields, true)
				return
			}
			require.Len(t, sch.AnyOf, 2, name)
			checkShape(name, sch.AnyOf[0], fields, true)
			checkShape(name, sch.AnyOf[1], fields, false)
		}
		for _, o := range wire.Objects {
			check(o.Name, o.Fields)
		}
		var compact []wire.Field
		for _, f := range wire.EventFields {
			if f.Compact {
				compact = append(compact, f)
			}
		}
		check("EventCompact", compact)
	})

	t.Run("webhook payload", func(t *testing.T) {
		t.Parallel()
		ev, err := db.WebhookEventByID(context.Background(), s.store.Pool, want.ID)
		require.NoError(t, err)
		body, err := jobs.EncodeDeliveryBody(cryptointel.SurfaceSignal, ev, restNow, jobs.WebhookMaxBodyBytes)
		require.NoError(t, err)
		var payload struct {
			Event json.RawMessage `json:"event"`
		}
		require.NoError(t, json.Unmarshal(body, &payload))
		got := checkWireObject(t, payload.Event, wire.EventFields, &wire.Webhook, true)
		require.Equal(t, want, got)
		// encoding/json's HTML escaping, and the full-precision instants.
		require.Contains(t, string(payload.Event), `\u003cb\u003e`)
		require.Contains(t, string(payload.Event), `"latestEvidenceTimestamp":"`+wireAt.Format(time.RFC3339Nano)+`"`)
	})

	key := s.apiKey(t)
	for _, c := range []struct {
		format   string
		evidence bool
	}{
		{exportjob.FormatJSONL, true},
		{exportjob.FormatJSONL, false},
		{exportjob.FormatCSV, true},
		{exportjob.FormatParquet, true},
	} {
		t.Run(fmt.Sprintf("export %s evidence=%v", c.format, c.evidence), func(t *testing.T) {
			t.Parallel()
			file := wireExport(t, s, key, c.format, c.evidence)
			exp := want
			if !c.evidence {
				exp.Evidence = nil
			}
			switch c.format {
			case exportjob.FormatJSONL:
				lines := bytes.Split(bytes.TrimSuffix(file, []byte("\n")), []byte("\n"))
				require.Len(t, lines, 1)
				got := checkWireObject(t, lines[0], wire.EventFields, &wire.JSONL, c.evidence)
				require.Equal(t, exp, got)
				require.Contains(t, string(lines[0]), `"title":"Wire <b>`, "exports do not escape HTML")
			case exportjob.FormatCSV:
				recs, err := csv.NewReader(bytes.NewReader(file)).ReadAll()
				require.NoError(t, err)
				require.Len(t, recs, 2)
				require.Equal(t, wireKeys(wire.EventFields, &wire.CSV, true), recs[0])
				require.Equal(t, csvLossy(exp), decodeWireCSV(t, recs[1]))
			case exportjob.FormatParquet:
				f, err := parquet.OpenFile(bytes.NewReader(file), int64(len(file)))
				require.NoError(t, err)
				checkParquetGroup(t, "Event", f.Schema().Fields(), wire.EventFields)
				rows, err := parquet.Read[wire.Event](bytes.NewReader(file), int64(len(file)))
				require.NoError(t, err)
				require.Len(t, rows, 1)
				got := rows[0]
				got.LatestEvidenceTimestamp = got.LatestEvidenceTimestamp.UTC()
				for i := range got.Evidence {
					got.Evidence[i].Timestamp = got.Evidence[i].Timestamp.UTC()
				}
				for i := range got.Owners {
					if got.Owners[i].Aliases == nil {
						got.Owners[i].Aliases = []string{}
					}
				}
				require.Equal(t, exp, got)
			}
		})
	}
}

// wireKeys are the members (or columns) encoding enc writes for fields:
// the canonical names, then the legacy aliases; OnRequest fields only with
// onRequest.
func wireKeys(fields []wire.Field, enc *wire.Encoding, onRequest bool) []string {
	var keys, legacy []string
	for _, f := range fields {
		if f.OnRequest && !onRequest {
			continue
		}
		keys = append(keys, f.Name)
		if f.Legacy != "" && enc.Legacy {
			legacy = append(legacy, f.Legacy)
		}
	}
	return append(keys, legacy...)
}

// findWireEvent returns the fixture event's object in a /v1 body.
func findWireEvent(t *testing.T, body []byte) json.RawMessage {
	t.Helper()
	var found json.RawMessage
	var walk func(raw json.RawMessage)
	walk = func(raw json.RawMessage) {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			return
		}
		switch raw[0] {
		case '[':
			var items []json.RawMessage
			require.NoError(t, json.Unmarshal(raw, &items))
			for _, it := range items {
				walk(it)
			}
		case '{':
			var m map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(raw, &m))
			if id, ok := m["id"]; ok && string(id) == strconv.FormatInt(wireEventID, 10) {
				if _, ok := m["latestEvidenceTimestamp"]; ok && found == nil {
					found = raw
					return
				}
			}
			for _, v := range m {
				walk(v)
			}
		}
	}
	walk(body)
	require.NotNil(t, found, "event %d not in %s", wireEventID, body)
	return found
}

// orderedMembers returns an object's member names in order and their
// values.
func orderedMembers(t *testing.T, raw json.RawMessage) ([]string, map[string]json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok, "%s", raw)
	var keys []string
	values := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		k := tok.(string)
		var v json.RawMessage
		require.NoError(t, dec.Decode(&v))
		require.NotContains(t, values, k, "member %s twice in %s", k, raw)
		keys = append(keys, k)
		values[k] = v
	}
	return keys, values
}

// checkWireObject checks that raw has exactly the members enc writes for
// fields, in order, every legacy alias equal to its canonical member, and
// nested entity refs and evidence likewise; it returns the object decoded
// by the tables.
func checkWireObject(t *testing.T, raw json.RawMessage, fields []wire.Field, enc *wire.Encoding, onRequest bool) wire.Event {
	t.Helper()
	var out wire.Event
	decodeWireObject(t, raw, fields, enc, onRequest, reflect.ValueOf(&out).Elem())
	return out
}

func decodeWireObject(t *testing.T, raw json.RawMessage, fields []wire.Field, enc *wire.Encoding, onRequest bool, dst reflect.Value) {
	t.Helper()
	keys, values := orderedMembers(t, raw)
	require.Equal(t, wireKeys(fields, enc, onRequest), keys, "members of %s", raw)
	for _, f := range fields {
		v, ok := values[f.Name]
		if !ok {
			continue
		}
		if f.Legacy != "" && enc.Legacy {
			require.JSONEq(t, string(v), string(values[f.Legacy]), "%s equals %s", f.Legacy, f.Name)
		}
		field := dst.FieldByName(f.GoName())
		require.True(t, field.IsValid(), "wire Go type has no field %s", f.GoName())
		switch f.Type {
		case wire.Int, wire.String, wire.Strings:
			require.NoError(t, json.Unmarshal(v, field.Addr().Interface()), "%s: %s", f.Name, v)
		case wire.Float:
			require.NoError(t, json.Unmarshal(v, field.Addr().Interface()), "%s: %s", f.Name, v)
		case wire.Time:
			var s string
			require.NoError(t, json.Unmarshal(v, &s))
			at, err := time.Parse(enc.TimeLayout, s)
			require.NoError(t, err, "%s %q in layout %s", f.Name, s, enc.TimeLayout)
			field.Set(reflect.ValueOf(at.UTC()))
		case wire.EntityRefs, wire.EvidenceList:
			var items []json.RawMessage
			require.NoError(t, json.Unmarshal(v, &items))
			nested := wire.EntityRefFields
			if f.Type == wire.EvidenceList {
				nested = wire.EvidenceFields
			}
			list := reflect.MakeSlice(field.Type(), len(items), len(items))
			for i, it := range items {
				decodeWireObject(t, it, nested, enc, true, list.Index(i))
			}
			field.Set(list)
		default:
			t.Fatalf("field %s: unknown wire type %s", f.Name, f.Type)
		}
	}
}

// decodeWireCSV decodes a csv export row by wire.EventFields.
func decodeWireCSV(t *testing.T, rec []string) wire.Event {
	t.Helper()
	var out wire.Event
	dst := reflect.ValueOf(&out).Elem()
	require.Len(t, rec, len(wire.EventFields))
	for i, f := range wire.EventFields {
		cell, field := rec[i], dst.FieldByName(f.GoName())
		switch f.Type {
		case wire.Int:
			n, err := strconv.ParseInt(cell, 10, 64)
			require.NoError(t, err)
			field.SetInt(n)
		case wire.String:
			field.SetString(cell)
		case wire.Float:
			if cell != "" {
				v, err := strconv.ParseFloat(cell, 64)
				require.NoError(t, err)
				field.Set(reflect.ValueOf(&v))
			}
		case wire.Time:
			at, err := time.Parse(wire.CSV.TimeLayout, cell)
			require.NoError(t, err)
			field.Set(reflect.ValueOf(at.UTC()))
		case wire.Strings:
			field.Set(reflect.ValueOf(strings.Split(cell, " | ")))
		case wire.EntityRefs:
			var refs []wire.EntityRef
			for _, part := range strings.Split(cell, "|") {
				id, label, _ := strings.Cut(part, ":")
				n, err := strconv.ParseInt(id, 10, 64)
				require.NoError(t, err)
				refs = append(refs, wire.EntityRef{ID: n, Label: label})
			}
			field.Set(reflect.ValueOf(refs))
		case wire.EvidenceList:
			var ev []wire.Evidence
			for _, part := range strings.Split(cell, "|") {
				id, url, _ := strings.Cut(part, ":")
				n, err := strconv.ParseInt(id, 10, 64)
				require.NoError(t, err)
				ev = append(ev, wire.Evidence{ID: n, URL: url})
			}
			field.Set(reflect.ValueOf(ev))
		}
	}
	return out
}

// csvLossy is e as a CSV row carries it: an entity ref as id and label, a
// post as id and url.
func csvLossy(e wire.Event) wire.Event {
	refs := func(in []wire.EntityRef) []wire.EntityRef {
		var out []wire.EntityRef
		for _, r := range in {
			out = append(out, wire.EntityRef{ID: r.ID, Label: r.Label})
		}
		return out
	}
	e.Owners, e.Participants = refs(e.Owners), refs(e.Participants)
	var ev []wire.Evidence
	for _, x := range e.Evidence {
		ev = append(ev, wire.Evidence{ID: x.ID, URL: x.URL})
	}
	e.Evidence = ev
	return e
}

// checkParquetGroup checks a Parquet group's columns against a table:
// names in order, optional exactly for nullable fields, lists for list
// types and nested groups for object lists.
func checkParquetGroup(t *testing.T, name string, cols []parquet.Field, fields []wire.Field) {
	t.Helper()
	require.Len(t, cols, len(fields), "Parquet %s columns", name)
	for i, f := range fields {
		c := cols[i]
		require.Equal(t, f.Name, c.Name(), "Parquet %s column %d", name, i)
		require.Equal(t, f.Nullable, c.Optional(), "Parquet %s.%s optional", name, f.Name)
		switch f.Type {
		case wire.Strings, wire.EntityRefs, wire.EvidenceList:
			require.Equal(t, "LIST", logicalName(c), "Parquet %s.%s is a list", name, f.Name)
			elem := c.Fields()[0].Fields()[0]
			switch f.Type {
			case wire.EntityRefs:
				checkParquetGroup(t, f.Name, elem.Fields(), wire.EntityRefFields)
			case wire.EvidenceList:
				checkParquetGroup(t, f.Name, elem.Fields(), wire.EvidenceFields)
			}
		case wire.Time:
			require.True(t, strings.HasPrefix(logicalName(c), "TIMESTAMP("), "Parquet %s.%s is a timestamp: %s", name, f.Name, logicalName(c))
		}
	}
}

// logicalName is the name of a column's logical type ("" for none).
func logicalName(c parquet.Field) string {
	if lt := c.Type().LogicalType(); lt != nil {
		return lt.String()
	}
	return ""
}

// graphqlField is a field of a type as introspection reports it.
type graphqlField struct {
	typ, description, reason string
	deprecated               bool
}

// graphqlTypeFields introspects a GraphQL type's fields.
func graphqlTypeFields(t *testing.T, s *restServer, name string) map[string]graphqlField {
	t.Helper()
	q := `{"query":"{ __type(name: \"` + name + `\") { fields(includeDeprecated: true) { name description isDeprecated deprecationReason ` +
		`type { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }"}`
	b := graphqlPost(t, s, []byte(q))
	type typeRef struct {
		Kind   string   `json:"kind"`
		Name   string   `json:"name"`
		OfType *typeRef `json:"ofType"`
	}
	var out struct {
		Data struct {
			Type struct {
				Fields []struct {
					Name              string  `json:"name"`
					Description       string  `json:"description"`
					IsDeprecated      bool    `json:"isDeprecated"`
					DeprecationReason *string `json:"deprecationReason"`
					Type              typeRef `json:"type"`
				} `json:"fields"`
			} `json:"__type"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(b, &out), "%s", b)
	var render func(r *typeRef) string
	render = func(r *typeRef) string {
		switch r.Kind {
		case "NON_NULL":
			return render(r.OfType) + "!"
		case "LIST":
			return "[" + render(r.OfType) + "]"
		}
		return r.Name
	}
	fields := map[string]graphqlField{}
	for _, f := range out.Data.Type.Fields {
		g := graphqlField{typ: render(&f.Type), description: f.Description, deprecated: f.IsDeprecated}
		if f.DeprecationReason != nil {
			g.reason = *f.DeprecationReason
		}
		fields[f.Name] = g
	}
	require.NotEmpty(t, fields, "GraphQL type %s: %s", name, b)
	return fields
}

// graphqlPost sends a GraphQL request body and returns the response body.
func graphqlPost(t *testing.T, s *restServer, body []byte) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.base+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.apiKey(t))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	require.NotContains(t, string(b), `"errors"`)
	return b
}

// graphqlWireType is the GraphQL type that serves a wire field.
func graphqlWireType(f wire.Field) string {
	t := map[wire.Type]string{
		wire.Int: "Int", wire.String: "String", wire.Float: "Float", wire.Time: "Time",
		wire.Strings: "[String!]", wire.EntityRefs: "[Entity!]", wire.EvidenceList: "[Evidence!]",
	}[f.Type]
	if !f.Nullable {
		t += "!"
	}
	return t
}

// openAPIWireType is the JSON Schema "type" of a wire field.
func openAPIWireType(f wire.Field) any {
	t := map[wire.Type]string{
		wire.Int: "integer", wire.String: "string", wire.Float: "number", wire.Time: "string",
		wire.Strings: "array", wire.EntityRefs: "array", wire.EvidenceList: "array",
	}[f.Type]
	if f.Nullable {
		return []any{t, "null"}
	}
	return t
}

// wireExport requests a radar.history export of the fixture in format,
// waits for it and downloads the file.
func wireExport(t *testing.T, s *restServer, key, format string, evidence bool) []byte {
	t.Helper()
	send := func(method, url string, body []byte) (int, []byte) {
		if strings.HasPrefix(url, "/") {
			url = s.base + url
		}
		req, err := http.NewRequest(method, url, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, b
	}
	body, err := json.Marshal(map[string]any{"scope": exportjob.ScopeRadarHistory, "format": format,
		"since": restNow.Add(-24 * time.Hour).Format(time.RFC3339), "includeEvidence": evidence})
	require.NoError(t, err)
	status, b := send(http.MethodPost, "/v1/export/jobs", body)
	require.Equal(t, http.StatusCreated, status, "%s", b)
	var job struct {
		Data struct {
			ID          string  `json:"id"`
			Status      string  `json:"status"`
			DownloadURL *string `json:"downloadUrl"`
			Error       *string `json:"error"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(b, &job))
	deadline := time.Now().Add(30 * time.Second)
	for job.Data.Status != exportjob.StatusCompleted {
		require.NotEqual(t, exportjob.StatusFailed, job.Data.Status, "export failed: %v", job.Data.Error)
		require.True(t, time.Now().Before(deadline), "export %s still %s", job.Data.ID, job.Data.Status)
		time.Sleep(50 * time.Millisecond)
		status, b = send(http.MethodGet, "/v1/export/jobs/"+job.Data.ID, nil)
		require.Equal(t, http.StatusOK, status, "%s", b)
		require.NoError(t, json.Unmarshal(b, &job))
	}
	require.NotNil(t, job.Data.DownloadURL)
	status, file := send(http.MethodGet, *job.Data.DownloadURL, nil)
	require.Equal(t, http.StatusOK, status, "%s", file)
	return file
}
