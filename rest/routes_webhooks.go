package rest

import (
	"fmt"
	"net/http"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/webhook"
	"github.com/cryptointel/cryptointel/webhookstore"
)

// WebhookRoutes returns the route-table entries of webhook management:
// operational layer, surface "delivery", plans with webhook access.
func WebhookRoutes(h *WebhookHandlers) []Route {
	policy := func(name string) access.Policy {
		return access.Policy{Surface: "delivery", Layer: access.LayerOperational, Name: name, CreditCost: 1, Feature: access.FeatureWebhooks}
	}
	id := Param{Name: "id", In: "path", Type: TypeInteger, Required: true, Description: "Webhook id."}
	body := []int{http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType}
	return []Route{
		{Method: http.MethodPost, Path: "/v1/webhooks", Summary: "Register a webhook; the response shows the full secret once.",
			Description: fmt.Sprintf("An account has at most %d webhooks (400 `%s`). The URL must use https and resolve to a public address; "+
				"the signing secret (`data.secret`) is shown in this response and in a rotation's only.", webhook.MaxPerAccount, webhookstore.MsgMaxWebhooks),
			Policy: policy("webhooks.create"), Handler: h.Create, RequestBody: webhookCreateSchema,
			Response: goSchemaOf[webhookBody](), SuccessStatus: http.StatusCreated, ErrorStatuses: body},
		{Method: http.MethodGet, Path: "/v1/webhooks", Summary: "List the account's webhooks, most recently created first.", Policy: policy("webhooks.list"), Handler: h.List,
			Response: goSchemaOf[webhookListBody]()},
		{Method: http.MethodGet, Path: "/v1/webhooks/{id}", Summary: "One webhook with its recent deliveries.", Policy: policy("webhooks.get"), Handler: h.Get,
			Params: []Param{id,
				{Name: "status", In: "query", Type: TypeString, Enum: []string{webhook.DeliveryPending, webhook.DeliverySucceeded, webhook.DeliveryFailed},
					Description: "Filter deliveries: pending, succeeded or failed."},
				boundedParam("limit", "", &cryptointel.WebhookDeliveriesLimit, fmt.Sprintf("Deliveries to return: %d to %d, default %d.",
					cryptointel.WebhookDeliveriesLimit.Min, cryptointel.WebhookDeliveriesLimit.Max, cryptointel.WebhookDeliveriesLimit.Default))},
			Response: goSchemaOf[webhookDetailBody](), ErrorStatuses: []int{http.StatusNotFound}},
		{Method: http.MethodPatch, Path: "/v1/webhooks/{id}", Summary: "Update url, event_types or active; only included fields change.", Policy: policy("webhooks.update"), Handler: h.Update,
			Params: []Param{id}, RequestBody: webhookUpdateSchema,
			Response: goSchemaOf[webhookBody](), ErrorStatuses: append([]int{http.StatusNotFound}, body...)},
		{Method: http.MethodDelete, Path: "/v1/webhooks/{id}", Summary: "Delete a webhook and its deliveries.", Policy: policy("webhooks.delete"), Handler: h.Delete, Params: []Param{id},
			Response: goSchemaOf[webhookDeletedBody](), ErrorStatuses: []int{http.StatusNotFound}},
		{Method: http.MethodPost, Path: "/v1/webhooks/{id}/rotate-secret", Summary: "Replace the signing secret; the response shows the new secret once.", Policy: policy("webhooks.rotate_secret"), Handler: h.RotateSecret, Params: []Param{id},
			Response: goSchemaOf[webhookBody](), ErrorStatuses: []int{http.StatusNotFound}},
		{Method: http.MethodPost, Path: "/v1/webhooks/{id}/test", Summary: "Queue a signed ping delivery.", Policy: policy("webhooks.test"), Handler: h.Test, Params: []Param{id},
			Response: goSchemaOf[deliveryBody](), SuccessStatus: http.StatusAccepted, ErrorStatuses: []int{http.StatusNotFound}},
		{Method: http.MethodPost, Path: "/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver", Summary: "Queue a delivery again under the same delivery id.", Policy: policy("webhooks.redeliver"), Handler: h.Redeliver,
			Params:   []Param{id, {Name: "deliveryId", In: "path", Type: "string", Required: true, Description: "Delivery id (UUID)."}},
			Response: goSchemaOf[deliveryBody](), SuccessStatus: http.StatusAccepted, ErrorStatuses: []int{http.StatusNotFound}},
	}
}
