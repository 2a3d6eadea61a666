package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/webhook"
	"github.com/cryptointel/cryptointel/webhookstore"
)

// Messages of a webhook management body that cannot be read (the export
// routes word theirs differently, and clients match on both).
var (
	msgWebhookBodyTooLarge   = "Request body too large (max " + maxJSONBody + ")"
	msgWebhookBodyUnreadable = "Could not read request body"
	msgWebhookBodyNotObject  = "Request body must be a JSON object"
)

// WebhookQueue queues test pings and manual redeliveries (implemented by
// jobs.WebhookDispatcher). Both return ENOTFOUND; Redeliver also EINVALID.
type WebhookQueue interface {
	Test(ctx context.Context, accountID, webhookID int64) (*webhook.Delivery, error)
	Redeliver(ctx context.Context, accountID, webhookID int64, deliveryID string) (*webhook.Delivery, error)
}

// WebhookHandlers serve /v1/webhooks.
type WebhookHandlers struct {
	// DB runs the management statements.
	DB bun.IDB
	// Queue queues pings and redeliveries.
	Queue WebhookQueue
	// Guard checks that a URL resolves to allowed addresses at registration
	// and on update.
	Guard *webhook.Guard
}

// WebhookJSON is a webhook as the API shows it. Secret is set only in the
// responses that create it or rotate it.
type WebhookJSON struct {
	ID                  int64     `json:"id"`
	URL                 string    `json:"url"`
	Secret              string    `json:"secret,omitempty"`
	SecretHint          string    `json:"secret_hint"`
	EventTypes          []string  `json:"event_types"`
	Active              bool      `json:"active"`
	ConsecutiveFailures int       `json:"consecutive_failures"`
	CreatedAt           time.Time `json:"created_at"`
	UpdatedAt           time.Time `json:"updated_at"`
}

// DeliveryJSON is a delivery record.
type DeliveryJSON struct {
	ID          string     `json:"id"`
	EventID     *int64     `json:"event_id"`
	EventType   string     `json:"event_type"`
	Status      string     `json:"status"`
	Attempts    int        `json:"attempts"`
	LastStatus  *int       `json:"last_status"`
	LastError   *string    `json:"last_error"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	DeliveredAt *time.Time `json:"delivered_at"`
}

// The bodies of the webhook routes (their OpenAPI schemas are derived from
// these types, goschema.go).
type (
	// webhookBody is a response holding one webhook.
	webhookBody struct {
		Data WebhookJSON `json:"data"`
	}
	// webhookListBody is GET /v1/webhooks' response.
	webhookListBody struct {
		Data []WebhookJSON `json:"data"`
	}
	// WebhookDetailJSON is a webhook with its recent deliveries.
	WebhookDetailJSON struct {
		WebhookJSON
		Deliveries []DeliveryJSON `json:"deliveries"`
	}
	// webhookDetailBody is GET /v1/webhooks/{id}'s response.
	webhookDetailBody struct {
		Data WebhookDetailJSON `json:"data"`
	}
	// webhookDeleted is what DELETE /v1/webhooks/{id} says of the webhook.
	webhookDeleted struct {
		Deleted bool  `json:"deleted"`
		ID      int64 `json:"id"`
	}
	// webhookDeletedBody is DELETE /v1/webhooks/{id}'s response.
	webhookDeletedBody struct {
		Data webhookDeleted `json:"data"`
	}
	// deliveryBody is a response holding one delivery (a queued ping or
	// redelivery).
	deliveryBody struct {
		Data DeliveryJSON `json:"data"`
	}
)

// webhookCreateSchema and webhookUpdateSchema are the JSON Schemas of the
// bodies of POST /v1/webhooks and PATCH /v1/webhooks/{id}: the fields
// readWebhookBody's callers accept, nothing else.
var (
	webhookURLSchema = map[string]any{"type": "string", "format": "uri",
		"description": "Where deliveries are POSTed: an https URL resolving to a public address."}
	webhookEventTypesSchema = map[string]any{"type": "array", "minItems": 1,
		"items":       map[string]any{"type": "string", "enum": []string{cryptointel.SurfaceRadar, cryptointel.SurfaceSignal}},
		"description": "The events delivered: radar, signal, or both."}
	webhookCreateSchema = map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"url", "event_types"},
		"properties": map[string]any{"url": webhookURLSchema, "event_types": webhookEventTypesSchema},
	}
	webhookUpdateSchema = map[string]any{
		"type": "object", "additionalProperties": false, "minProperties": 1,
		"properties": map[string]any{"url": webhookURLSchema, "event_types": webhookEventTypesSchema,
			"active": map[string]any{"type": "boolean", "description": "true re-enables a webhook (and resets its failure count); false pauses it."}},
		"description": "Only the fields included change; at least one.",
	}
)

func webhookJSON(w *webhook.Webhook, withSecret bool) WebhookJSON {
	out := WebhookJSON{
		ID: w.ID, URL: w.URL, SecretHint: webhook.SecretHint(w.Secret), EventTypes: w.EventTypes,
		Active: w.Active, ConsecutiveFailures: w.ConsecutiveFailures, CreatedAt: w.CreatedAt.UTC(), UpdatedAt: w.UpdatedAt.UTC(),
	}
	if out.EventTypes == nil {
		out.EventTypes = []string{}
	}
	if withSecret {
		out.Secret = w.Secret
	}
	return out
}

func deliveryJSON(d *webhook.Delivery) DeliveryJSON {
	out := DeliveryJSON{
		ID: d.ID, EventID: d.EventID, EventType: d.EventType, Status: d.Status, Attempts: d.Attempts,
		LastStatus: d.LastStatus, LastError: d.LastError, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(),
	}
	if d.DeliveredAt != nil {
		t := d.DeliveredAt.UTC()
		out.DeliveredAt = &t
	}
	return out
}

// webhookAccount returns the calling account or EUNAUTHORIZED: webhooks
// belong to accounts, so pay-per-request callers have none.
func webhookAccount(r *http.Request) (int64, error) {
	c, ok := access.CallerFrom(r.Context())
	if !ok || c.AccountID == 0 {
		return 0, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "An API key is required to manage webhooks.")
	}
	return c.AccountID, nil
}

// webhookID parses the {id} path value; a malformed id is not found.
func webhookID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, cryptointel.Errorf(cryptointel.EINVALID, "id must be a positive integer")
	}
	return id, nil
}

// webhookTarget returns the calling account and the webhook id of the path:
// what every per-webhook route needs first.
func webhookTarget(r *http.Request) (accountID, id int64, err error) {
	if accountID, err = webhookAccount(r); err != nil {
		return 0, 0, err
	}
	if id, err = webhookID(r); err != nil {
		return 0, 0, err
	}
	return accountID, id, nil
}

// readWebhookBody reads a JSON object body (readJSONBody) into a map of
// raw fields. It returns EINVALID for a missing or malformed body, ETOOLARGE
// above cryptointel.MaxBodyBytes and errUnsupportedMediaType for another content
// type.
func readWebhookBody(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, error) {
	b, err := readJSONBody(w, r, msgWebhookBodyTooLarge, msgWebhookBodyUnreadable)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s", msgWebhookBodyNotObject)
	}
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s", msgWebhookBodyNotObject)
	}
	if dec.More() {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, "Request body must be a single JSON object")
	}
	return fields, nil
}

// unknownField returns an EINVALID error for the first field not in known.
func unknownField(fields map[string]json.RawMessage, known ...string) error {
	for name := range fields {
		found := false
		for _, k := range known {
			if name == k {
				found = true
			}
		}
		if !found {
			return cryptointel.Errorf(cryptointel.EINVALID, "Unknown field %q (allowed: %s)", name, strings.Join(known, ", "))
		}
	}
	return nil
}

// parseURLField validates a url field: a JSON string, https, resolving to
// allowed addresses.
func (h *WebhookHandlers) parseURLField(ctx context.Context, raw json.RawMessage) (string, error) {
	var u string
	if err := json.Unmarshal(raw, &u); err != nil {
		return "", cryptointel.Errorf(cryptointel.EINVALID, webhook.MsgURLMustUseHTTPS)
	}
	u = strings.TrimSpace(u)
	guard := h.Guard
	if guard == nil {
		guard = &webhook.Guard{}
	}
	switch err := guard.CheckURL(ctx, u); {
	case errors.Is(err, webhook.ErrNotHTTPS):
		return "", cryptointel.Errorf(cryptointel.EINVALID, webhook.MsgURLMustUseHTTPS)
	case err != nil:
		return "", cryptointel.Errorf(cryptointel.EINVALID, "%s", err.Error())
	}
	return u, nil
}

// parseEventTypesField validates an event_types field.
func parseEventTypesField(raw json.RawMessage) ([]string, error) {
	var types []string
	if err := json.Unmarshal(raw, &types); err != nil || types == nil {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, webhookstore.MsgInvalidEventTypes)
	}
	return webhookstore.NormalizeEventTypes(types)
}

// Create serves POST /v1/webhooks: body {url, event_types}; 201 with the
// webhook and its full secret.
func (h *WebhookHandlers) Create(w http.ResponseWriter, r *http.Request) error {
	accountID, err := webhookAccount(r)
	if err != nil {
		return err
	}
	fields, err := readWebhookBody(w, r)
	if err != nil {
		return handleBodyError(w, err)
	}
	if err := unknownField(fields, "url", "event_types"); err != nil {
		return err
	}
	rawURL, ok := fields["url"]
	if !ok {
		return cryptointel.Errorf(cryptointel.EINVALID, "url is required")
	}
	rawTypes, ok := fields["event_types"]
	if !ok {
		return cryptointel.Errorf(cryptointel.EINVALID, "event_types is required (radar, signal, or both)")
	}
	types, err := parseEventTypesField(rawTypes)
	if err != nil {
		return err
	}
	u, err := h.parseURLField(r.Context(), rawURL)
	if err != nil {
		return err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return err
	}
	hook, err := webhookstore.CreateWebhook(r.Context(), h.DB, accountID, u, types, secret)
	if err != nil {
		return err
	}
	return writeResponse(w, http.StatusCreated, webhookBody{webhookJSON(hook, true)})
}

// List serves GET /v1/webhooks.
func (h *WebhookHandlers) List(w http.ResponseWriter, r *http.Request) error {
	accountID, err := webhookAccount(r)
	if err != nil {
		return err
	}
	hooks, err := webhookstore.ListWebhooks(r.Context(), h.DB, accountID)
	if err != nil {
		return err
	}
	data := make([]WebhookJSON, len(hooks))
	for i, hook := range hooks {
		data[i] = webhookJSON(hook, false)
	}
	return writeResponse(w, http.StatusOK, webhookListBody{data})
}

// Get serves GET /v1/webhooks/{id}: the webhook and its recent deliveries
// (?status=failed to inspect failures).
func (h *WebhookHandlers) Get(w http.ResponseWriter, r *http.Request) error {
	accountID, id, err := webhookTarget(r)
	if err != nil {
		return err
	}
	c, err := callOf(r)
	if err != nil {
		return err
	}
	f := webhookstore.DeliveryFilter{Status: c.String("status"), Limit: c.Int("limit")}
	hook, err := webhookstore.WebhookByID(r.Context(), h.DB, accountID, id)
	if err != nil {
		return err
	}
	ds, err := webhookstore.WebhookDeliveries(r.Context(), h.DB, hook.ID, f)
	if err != nil {
		return err
	}
	deliveries := make([]DeliveryJSON, len(ds))
	for i, d := range ds {
		deliveries[i] = deliveryJSON(d)
	}
	return writeResponse(w, http.StatusOK, webhookDetailBody{WebhookDetailJSON{webhookJSON(hook, false), deliveries}})
}

// Update serves PATCH /v1/webhooks/{id}: only included fields change;
// active=true re-enables and resets the failure count.
func (h *WebhookHandlers) Update(w http.ResponseWriter, r *http.Request) error {
	accountID, id, err := webhookTarget(r)
	if err != nil {
		return err
	}
	fields, err := readWebhookBody(w, r)
	if err != nil {
		return handleBodyError(w, err)
	}
	var patch webhookstore.WebhookPatch
	_, hasURL := fields["url"]
	_, hasTypes := fields["event_types"]
	_, hasActive := fields["active"]
	if !hasURL && !hasTypes && !hasActive {
		return cryptointel.Errorf(cryptointel.EINVALID, webhookstore.MsgNoFieldsToUpdate)
	}
	if err := unknownField(fields, "url", "event_types", "active"); err != nil {
		return err
	}
	// Ownership first, so another account's id is 404 whatever the body.
	if _, err := webhookstore.WebhookByID(r.Context(), h.DB, accountID, id); err != nil {
		return err
	}
	if hasURL {
		u, err := h.parseURLField(r.Context(), fields["url"])
		if err != nil {
			return err
		}
		patch.URL = &u
	}
	if hasTypes {
		types, err := parseEventTypesField(fields["event_types"])
		if err != nil {
			return err
		}
		patch.EventTypes = types
	}
	if hasActive {
		var active *bool
		if err := json.Unmarshal(fields["active"], &active); err != nil || active == nil {
			return cryptointel.Errorf(cryptointel.EINVALID, "active must be a boolean")
		}
		patch.Active = active
	}
	hook, err := webhookstore.UpdateWebhook(r.Context(), h.DB, accountID, id, patch)
	if err != nil {
		return err
	}
	return writeResponse(w, http.StatusOK, webhookBody{webhookJSON(hook, false)})
}

// Delete serves DELETE /v1/webhooks/{id}.
func (h *WebhookHandlers) Delete(w http.ResponseWriter, r *http.Request) error {
	accountID, id, err := webhookTarget(r)
	if err != nil {
		return err
	}
	if err := webhookstore.DeleteWebhook(r.Context(), h.DB, accountID, id); err != nil {
		return err
	}
	return writeResponse(w, http.StatusOK, webhookDeletedBody{webhookDeleted{Deleted: true, ID: id}})
}

// RotateSecret serves POST /v1/webhooks/{id}/rotate-secret: the new secret
// is shown once and signs every attempt from now on.
func (h *WebhookHandlers) RotateSecret(w http.ResponseWriter, r *http.Request) error {
	accountID, id, err := webhookTarget(r)
	if err != nil {
		return err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return err
	}
	hook, err := webhookstore.RotateWebhookSecret(r.Context(), h.DB, accountID, id, secret)
	if err != nil {
		return err
	}
	return writeResponse(w, http.StatusOK, webhookBody{webhookJSON(hook, true)})
}

// Test serves POST /v1/webhooks/{id}/test: queues a signed ping (event type
// "ping") and answers 202 with its delivery record.
func (h *WebhookHandlers) Test(w http.ResponseWriter, r *http.Request) error {
	accountID, id, err := webhookTarget(r)
	if err != nil {
		return err
	}
	d, err := h.Queue.Test(r.Context(), accountID, id)
	if err != nil {
		return err
	}
	return writeResponse(w, http.StatusAccepted, deliveryBody{deliveryJSON(d)})
}

// Redeliver serves POST /v1/webhooks/{id}/deliveries/{deliveryId}/redeliver:
// queues the delivery again under the same delivery id (202).
func (h *WebhookHandlers) Redeliver(w http.ResponseWriter, r *http.Request) error {
	accountID, id, err := webhookTarget(r)
	if err != nil {
		return err
	}
	d, err := h.Queue.Redeliver(r.Context(), accountID, id, r.PathValue("deliveryId"))
	if err != nil {
		return err
	}
	return writeResponse(w, http.StatusAccepted, deliveryBody{deliveryJSON(d)})
}
