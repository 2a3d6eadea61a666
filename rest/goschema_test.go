package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/httperr"
)

// handlerBodies are the handler routes whose Response is derived from a
// Go type, with that type.
func handlerBodies() (routes []Route, bodies map[string]reflect.Type) {
	routes = append(KeyRoutes(&KeyHandlers{}), UsageRoute(nil),
		TicketRoute(func([]byte, string, url.Values, time.Time) (string, time.Time, error) { return "", time.Time{}, nil }, time.Now))
	routes = append(append(routes, WebhookRoutes(&WebhookHandlers{})...), ExportRoutes(&ExportHandlers{})...)
	bodies = map[string]reflect.Type{
		"GET /v1/keys":              reflect.TypeFor[keyList](),
		"GET /v1/keys/audit":        reflect.TypeFor[keyAudit](),
		"POST /v1/keys":             reflect.TypeFor[keyCreated](),
		"DELETE /v1/keys/{id}":      reflect.TypeFor[keyRevoked](),
		"POST /v1/keys/{id}/rotate": reflect.TypeFor[keyRotated](),
		"GET /v1/usage":             reflect.TypeFor[access.UsageResponse](),
		"POST /v1/stream/tickets":   reflect.TypeFor[ticketBody](),

		"POST /v1/webhooks":                                        reflect.TypeFor[webhookBody](),
		"GET /v1/webhooks":                                         reflect.TypeFor[webhookListBody](),
		"GET /v1/webhooks/{id}":                                    reflect.TypeFor[webhookDetailBody](),
		"PATCH /v1/webhooks/{id}":                                  reflect.TypeFor[webhookBody](),
		"DELETE /v1/webhooks/{id}":                                 reflect.TypeFor[webhookDeletedBody](),
		"POST /v1/webhooks/{id}/rotate-secret":                     reflect.TypeFor[webhookBody](),
		"POST /v1/webhooks/{id}/test":                              reflect.TypeFor[deliveryBody](),
		"POST /v1/webhooks/{id}/deliveries/{deliveryId}/redeliver": reflect.TypeFor[deliveryBody](),
		"POST /v1/export/jobs":                                     reflect.TypeFor[exportJobBody](),
		"GET /v1/export/jobs":                                      reflect.TypeFor[exportJobListBody](),
		"GET /v1/export/jobs/{id}":                                 reflect.TypeFor[exportJobBody](),
	}
	return routes, bodies
}

// TestGoFieldNotesNameFields: every note names a field of a body type, so
// a renamed or removed field cannot leave its description behind; and the
// check refuses a note that names none.
func TestGoFieldNotesNameFields(t *testing.T) {
	_, bodies := handlerBodies()
	types := []reflect.Type{reflect.TypeFor[httperr.Body](), reflect.TypeFor[streamClose]()}
	for _, b := range bodies {
		types = append(types, b)
	}
	if err := checkGoFieldNotes(types...); err != nil {
		t.Fatal(err)
	}
	goFieldNotes["APIKeyView.gone"] = goNote{desc: "stale"}
	defer delete(goFieldNotes, "APIKeyView.gone")
	if err := checkGoFieldNotes(types...); err == nil || !strings.Contains(err.Error(), "APIKeyView.gone") {
		t.Fatalf("a note naming no field was not reported: %v", err)
	}
}

// TestHandlerBodiesConformToTheirSchema: a value of each handler route's
// body type, every field set, encodes to JSON its documented (closed)
// schema accepts; and the schema lists exactly the type's keys.
func TestHandlerBodiesConformToTheirSchema(t *testing.T) {
	routes, bodies := handlerBodies()
	raw, err := json.Marshal(OpenAPI(routes))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem://openapi.json", doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		key := r.Method + " " + r.Path
		typ, ok := bodies[key]
		if !ok {
			t.Errorf("%s: no body type", key)
			continue
		}
		if r.Response == nil {
			t.Errorf("%s: no Response", key)
			continue
		}
		status := "200"
		if r.SuccessStatus != 0 {
			status = strconv.Itoa(r.SuccessStatus)
		}
		ptr := strings.NewReplacer("~", "~0", "/", "~1").Replace(r.Path)
		sch, err := c.Compile("mem://openapi.json#/paths/" + ptr + "/" + strings.ToLower(r.Method) + "/responses/" + status + "/content/application~1json/schema")
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		v := reflect.New(typ).Elem()
		fill(v, "", "")
		body, err := json.Marshal(v.Interface())
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: %s does not conform: %v", key, body, err)
		}
	}
}

// fill sets every field of v: one item per slice, the first value of a
// noted enum, a pointer to a filled value.
func fill(v reflect.Value, owner, name string) {
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)))
	case v.Kind() == reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), owner, name)
	case v.Kind() == reflect.Struct:
		fillStruct(v)
	case v.Kind() == reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), owner, name)
	case v.Kind() == reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	case v.Kind() == reflect.String:
		s := "x"
		if e := goFieldNotes[owner+"."+name].enum; len(e) > 0 {
			s = e[0]
		}
		v.SetString(s)
	case v.CanInt():
		v.SetInt(1)
	case v.Kind() == reflect.Bool:
		v.SetBool(true)
	}
}

func fillStruct(v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		fill(v.Field(i), t.Name(), name)
	}
}

// TestOpenAPIRefusesAnUnnamedErrorStatus: an error status a route lists
// that no reusable response names is a programming error, not a status
// silently left out of the document (as 415 was).
func TestOpenAPIRefusesAnUnnamedErrorStatus(t *testing.T) {
	routes, _ := handlerBodies()
	r := routes[0]
	r.ErrorStatuses = []int{418}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "418") {
			t.Fatalf("OpenAPI documented a route with error status 418 (recovered %v)", p)
		}
	}()
	OpenAPI([]Route{r})
}
