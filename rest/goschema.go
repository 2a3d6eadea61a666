package rest

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/live"
	"github.com/cryptointel/cryptointel/webhook"
)

// The response schemas of the routes that run no GraphQL operation (the
// keys, usage and stream-ticket routes), of the error body and of the
// stream's close message are derived from the Go types
// their handlers encode, as a graph route's are from its operation: the
// properties, their order and their JSON types come from the struct's
// fields and json tags, so the schema cannot name a key the body lacks or
// miss one it has. What a Go type does not say (a description, the values
// of a string, that a slice may be null) is in goFieldNotes, keyed by the
// type and the field's JSON name; a note naming no field is an error.

// goNote is what the schema of one Go field says beyond its Go type.
type goNote struct {
	desc string
	// enum lists a string's values (of the items, for a slice).
	enum []string
	// nullable makes a slice or map nullable (a pointer to a scalar is
	// nullable already).
	nullable bool
	// format is a string's format (uri).
	format string
}

// goComponents names the Go types documented as components of
// /openapi.json: a field of one of these types is a $ref.
var goComponents = map[reflect.Type]string{
	reflect.TypeFor[db.APIKeyView]():    "APIKey",
	reflect.TypeFor[NewAPIKeyJSON]():    "NewAPIKey",
	reflect.TypeFor[db.KeyAuditEntry](): "KeyAuditEntry",
	reflect.TypeFor[WebhookJSON]():      "Webhook",
	reflect.TypeFor[DeliveryJSON]():     "WebhookDelivery",
	reflect.TypeFor[exportJobJSON]():    "ExportJob",
}

// goFieldNotes are the notes of the fields of the types the handler routes
// encode, by "Type.jsonName" (Type unqualified).
var goFieldNotes = map[string]goNote{
	"APIKeyView.prefix":     {desc: "The key's first characters, to tell keys apart."},
	"APIKeyView.status":     {enum: []string{db.KeyActive, db.KeyRevoked, db.KeyExpired}},
	"APIKeyView.expiresAt":  {desc: "When the key stops working; null for never."},
	"APIKeyView.lastUsedAt": {desc: "The start of the rate window (the minute) of the key's last request; null when never used."},
	"APIKeyView.replacedBy": {desc: "The key a rotation replaced this one with."},
	"APIKeyView.scopes": {enum: []string{db.ScopeData, db.ScopeManagement},
		desc: "What the key may do: data (read the API), management (manage the account's keys). A successor keeps its predecessor's."},
	"APIKeyView.surfaces": {enum: db.RestrictableSurfaces, nullable: true,
		desc: "A restricted key's surfaces: it reads only these and writes nothing. Null for an unrestricted key."},
	"NewAPIKeyJSON.key":                {desc: "The new API key, shown only in this response."},
	"KeyAuditEntry.apiKeyId":           {desc: "The key changed; null for a change of the account's plan."},
	"KeyAuditEntry.action":             {enum: db.AuditActions},
	"KeyAuditEntry.actor":              {desc: "\"" + db.ActorCLI + "\" for an operator's command, \"api_key:<id>\" for a change made through /v1/keys or a client connected through the OAuth consent page with that key, \"" + db.ActorOAuth + "\" for a grant the authorization server revoked itself (a reused code or refresh token, a client's revocation request)."},
	"KeyAuditEntry.detail":             {desc: "What changed: the plan before and after, the key a rotation created and its grace, a revocation's reason."},
	"UsageData.today":                  {desc: "Requests since midnight UTC."},
	"UsageData.thisWeek":               {desc: "Requests since Monday 00:00 UTC."},
	"UsageData.thisMonth":              {desc: "Requests since the 1st of the month 00:00 UTC."},
	"UsageData.budget":                 {desc: "The month's credits: the plan's allowance, used and remaining."},
	"UsageData.credits":                {desc: "Credits spent over the periods of today, thisWeek and thisMonth; thisMonth equals budget.used."},
	"UsageData.units":                  {desc: "The unit of each contract field above."},
	"UsageUnits.today":                 {enum: []string{access.UsageUnitsLabels.Today}},
	"UsageUnits.thisWeek":              {enum: []string{access.UsageUnitsLabels.ThisWeek}},
	"UsageUnits.thisMonth":             {enum: []string{access.UsageUnitsLabels.ThisMonth}},
	"UsageUnits.budget":                {enum: []string{access.UsageUnitsLabels.Budget}},
	"WebhookJSON.url":                  {format: "uri", desc: "Where deliveries are POSTed (https)."},
	"WebhookJSON.secret":               {desc: "The signing secret, shown only when the webhook is created and when its secret is rotated."},
	"WebhookJSON.secret_hint":          {desc: "The secret's last characters, to tell secrets apart."},
	"WebhookJSON.event_types":          {enum: []string{cryptointel.SurfaceRadar, cryptointel.SurfaceSignal}},
	"WebhookJSON.active":               {desc: fmt.Sprintf("false once paused, or after %d consecutive failed deliveries; PATCH active=true re-enables it.", webhook.AutoDisableAfter)},
	"WebhookJSON.consecutive_failures": {desc: "Failed deliveries since the last success."},
	"DeliveryJSON.id":                  {desc: "The delivery id (UUID), sent as the webhook-id header; a redelivery keeps it."},
	"DeliveryJSON.event_id":            {desc: "The event delivered; null for a ping."},
	"DeliveryJSON.event_type":          {enum: []string{cryptointel.SurfaceRadar, cryptointel.SurfaceSignal, webhook.EventTypePing}},
	"DeliveryJSON.status":              {enum: []string{webhook.DeliveryPending, webhook.DeliverySucceeded, webhook.DeliveryFailed}},
	"DeliveryJSON.attempts":            {desc: fmt.Sprintf("Attempts made, at most %d.", webhook.MaxAttempts)},
	"DeliveryJSON.last_status":         {desc: "The HTTP status of the last attempt; null before one, or when no response came."},
	"DeliveryJSON.last_error":          {desc: "Why the last attempt failed; null when it did not."},
	"exportJobJSON.id":                 {desc: "The job id (UUID)."},
	"exportJobJSON.appUserId":          {desc: "The account that owns the job."},
	"exportJobJSON.apiKeyId":           {desc: "The key that requested it."},
	"exportJobJSON.scope":              {enum: exportjob.Scopes},
	"exportJobJSON.format":             {enum: exportjob.Formats},
	"exportJobJSON.status":             {enum: []string{exportjob.StatusRequested, exportjob.StatusRunning, exportjob.StatusCompleted, exportjob.StatusFailed, exportjob.StatusExpired}},
	"exportJobJSON.downloadUrl":        {format: "uri", desc: "The signed link to the file, set while a completed job has not expired."},
	"exportJobJSON.expiresAt":          {desc: "When the download link stops working."},
	"exportJobJSON.error":              {desc: "Why a failed job failed."},
	"exportJobJSON.rowCount":           {desc: "Rows written: so far while running, in all once completed."},
	"exportJobJSON.byteSize":           {desc: "The file's size in bytes, once completed."},
	"exportJobJSON.sha256":             {desc: "The file's SHA-256 (hex), once completed."},
	"streamTicket.ticket":              {desc: "The ticket: pass it as the `ticket` query parameter of the stream URL."},
	"streamTicket.query":               {desc: "The stream's query the ticket is bound to, canonical (sorted)."},
	"streamTicket.url":                 {desc: "The stream URL to open: path, query and ticket."},
	"streamTicket.expiresAt":           {desc: "Until when the ticket opens its stream."},
	"Body.error":                       {desc: "What went wrong, for people; the contract's message, word for word. Do not match on it."},
	"Body.code": {enum: httperr.Codes(),
		desc: "The error's row of the error table (docs/api/errors.md#codes): a stable identifier to branch on."},
	"Body.param":        {desc: "The one request parameter (or body field) at fault, when there is one."},
	"Body.docUrl":       {format: "uri", desc: "The link to the code's row of the error reference."},
	"Body.requestId":    {desc: "The request's X-Request-Id, to quote when reporting a problem."},
	"streamClose.error": {desc: "Why the server closed the stream."},
	"streamClose.code": {enum: []string{live.CodeSlowConsumer, live.CodeShuttingDown, cryptointel.EQUOTA, cryptointel.EUNAUTHORIZED, cryptointel.EFORBIDDEN, cryptointel.EUNAVAILABLE},
		desc: "slow_consumer and shutting_down: reconnect and resume; quota_exceeded, unauthorized, forbidden: the key may not stream any more; unavailable: retry shortly."},
	"streamClose.cursor": {desc: "The cursor to resume from: the last event delivered, or the stream's start."},
}

// goSchemaOf is the response schema of T, the body a handler encodes
// with encoding/json; it panics on a type or note it cannot document (a
// programming error, found by every test that builds the route table).
func goSchemaOf[T any]() schema {
	d := &goDeriver{}
	s := d.schema(reflect.TypeFor[T](), goNote{}, true)
	if d.err != nil {
		panic("rest: " + d.err.Error())
	}
	return s
}

// goComponentSchemas are the components of goComponents, derived from
// their types.
func goComponentSchemas() schema {
	d := &goDeriver{}
	out := schema{}
	for t, name := range goComponents {
		out[name] = d.object(t)
	}
	if d.err != nil {
		panic("rest: " + d.err.Error())
	}
	return out
}

// checkGoFieldNotes reports the notes that name no field of the types the
// handler routes encode, so a renamed field cannot leave its description
// behind.
func checkGoFieldNotes(types ...reflect.Type) error {
	seen := map[string]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() || t == reflect.TypeFor[exportjob.Time]() {
			return
		}
		for _, f := range jsonFields(t) {
			if seen[f.owner+"."+f.name] {
				continue
			}
			seen[f.owner+"."+f.name] = true
			walk(f.typ)
		}
	}
	for _, t := range types {
		walk(t)
	}
	for t := range goComponents {
		walk(t)
	}
	var missing []string
	for k := range goFieldNotes {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("notes name no field of a handler route's body: %s", strings.Join(missing, ", "))
	}
	return nil
}

// goDeriver derives schemas from Go types, keeping the first error.
type goDeriver struct{ err error }

func (d *goDeriver) fail(format string, args ...any) schema {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
	return schema{}
}

// schema is the schema of a value of type t; top is false for a field,
// whose component type is a $ref.
func (d *goDeriver) schema(t reflect.Type, n goNote, top bool) schema {
	var s schema
	switch {
	case t == reflect.TypeFor[time.Time](), t == reflect.TypeFor[exportjob.Time]():
		s = dateTime()
	case t.Kind() == reflect.Pointer:
		s = d.schema(t.Elem(), goNote{enum: n.enum}, top)
		if t.Elem().Kind() != reflect.Struct || t.Elem() == reflect.TypeFor[time.Time]() || t.Elem() == reflect.TypeFor[exportjob.Time]() {
			// A pointer to a scalar is its null; a pointer to a struct is
			// how the handlers pass the struct.
			s["type"] = []any{s["type"], "null"}
		}
	case t.Kind() == reflect.String:
		s = str()
		if n.enum != nil {
			s = strEnum(n.enum...)
		}
		if n.format != "" {
			s["format"] = n.format
		}
	case t.Kind() == reflect.Bool:
		s = boolean()
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		s = integer()
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		s = number()
	case t.Kind() == reflect.Slice:
		s = arr(d.schema(t.Elem(), goNote{enum: n.enum}, false))
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		s = schema{"type": "object"}
	case t.Kind() == reflect.Struct:
		if name, ok := goComponents[t]; ok && !top {
			s = ref(name)
		} else {
			s = d.object(t)
		}
	default:
		return d.fail("no JSON Schema for Go type %s", t)
	}
	if n.nullable {
		s = nullable(s)
	}
	if n.desc != "" {
		s = describe(s, n.desc)
	}
	return s
}

// object is the closed object schema of struct type t, its properties in
// the order encoding/json writes them: required, but for omitempty ones.
func (d *goDeriver) object(t reflect.Type) schema {
	var props []prop
	for _, f := range jsonFields(t) {
		props = append(props, prop{name: f.name, s: d.schema(f.typ, goFieldNotes[f.owner+"."+f.name], false), optional: f.omitEmpty})
	}
	return obj(props...)
}

// jsonField is one key encoding/json writes for a struct.
type jsonField struct {
	name      string
	typ       reflect.Type
	owner     string // the declaring struct's name, for its note
	omitEmpty bool
}

// jsonFields are the keys encoding/json writes for struct type t, in
// order: its exported fields by their json names, an embedded struct's
// fields in its place. (The bodies' types have no name collisions, which
// encoding/json would resolve by depth.)
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				out = append(out, jsonFields(et)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, typ: ft, owner: t.Name(), omitEmpty: strings.Contains(","+opts+",", ",omitempty,")})
	}
	return out
}

// handled is route served by f, which returns the body: the route writes
// it with its SuccessStatus, and its Response is T's schema.
func handled[T any](route Route, f func(w http.ResponseWriter, r *http.Request) (T, error)) Route {
	status := route.SuccessStatus
	if status == 0 {
		status = http.StatusOK
	}
	route.Handler = func(w http.ResponseWriter, r *http.Request) error {
		body, err := f(w, r)
		if err != nil {
			return err
		}
		return writeResponse(w, status, body)
	}
	route.Response = goSchemaOf[T]()
	return route
}
