package rest

import (
	"net/http"
	"strings"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
)

// KeyPolicy is the policy of the /v1/keys routes named name: every plan,
// evaluation layer, free (a key must be revocable with the month's credits
// used up).
func KeyPolicy(name string) access.Policy {
	return access.Policy{Surface: "keys", Layer: access.LayerEvaluation, Name: name, CreditCost: 0}
}

// KeyRoutes returns the route-table entries of key management.
func KeyRoutes(h *KeyHandlers) []Route {
	id := Param{Name: "id", In: "path", Type: TypeInteger, Required: true, Description: "API key id."}
	return []Route{
		handled(Route{
			Method: http.MethodGet, Path: "/v1/keys", Summary: "The calling account's API keys, newest first",
			Description: "Every key of the account (never the keys themselves): status (active, revoked or expired), expiry, last use " +
				"(the start of the rate window of its last request), the key a rotation replaced it with, its scopes and, for a restricted key, its surfaces. " +
				"A key without the `management` scope sees only itself.",
			Policy: KeyPolicy("keys.list"),
			Params: []Param{boundedParam("limit", "", &cryptointel.KeysLimit, boundsDesc("Keys to return", cryptointel.KeysLimit)), boundedParam("offset", "", &cryptointel.KeysOffset, boundsDesc("Keys to skip", cryptointel.KeysOffset))},
		}, h.List),
		handled(Route{
			Method: http.MethodGet, Path: "/v1/keys/audit", Summary: "The calling account's key and plan changes, newest first",
			Description: "Each change with the acting key (`api_key:<id>`, or `cli` for an operator). Needs the `management` scope (403 `" +
				access.MsgKeyNeedsManagement + "`).",
			Policy:        KeyPolicy("keys.audit"),
			Params:        []Param{boundedParam("limit", "", &cryptointel.KeyAuditLimit, boundsDesc("Changes to return", cryptointel.KeyAuditLimit))},
			ErrorStatuses: []int{http.StatusForbidden},
		}, h.Audit),
		handled(Route{
			Method: http.MethodPost, Path: "/v1/keys", Summary: "Create a restricted key on the account",
			Description: "A restricted key reads only the `surfaces` given (any of " + strings.Join(db.RestrictableSurfaces, ", ") +
				"; `keys` and `usage` are open to every key) and writes nothing (403 `" + access.MsgKeyRestricted + "`). It has the `data` scope alone, " +
				"never reaches beyond a restricted creator's surfaces, expires when the creating key does (or sooner, with `expiresInSeconds`) and draws on the account's credits and rate window. " +
				"Needs the `management` scope. The response shows the new key once (`data.key`). One key beyond the account's active keys is a 409.",
			Policy: KeyPolicy("keys.create"),
			Params: []Param{
				{Name: "surfaces", In: "query", Type: TypeStringList, Required: true, Enum: db.RestrictableSurfaces, MaxItems: len(db.RestrictableSurfaces),
					Description: "The surfaces the key may read, comma-separated."},
				{Name: "expiresInSeconds", In: "query", Type: TypeInteger,
					Description: "Seconds until the key expires (1 or more); at most the creating key's remaining life."},
			},
			SuccessStatus: http.StatusCreated,
			ErrorStatuses: []int{http.StatusForbidden, http.StatusConflict},
		}, h.Create),
		handled(Route{
			Method: http.MethodDelete, Path: "/v1/keys/{id}", Summary: "Revoke one of the account's keys at once",
			Description: "The key is refused from the next request on, on every replica (401 `" + access.MsgRevokedKey + "`); its open streams close within a second. " +
				"A key may revoke itself; revoking another key needs the `management` scope (403 `" + access.MsgKeyNeedsManagement + "`). " +
				"Another account's key is not found; a revoked key is a 409.",
			Policy:        KeyPolicy("keys.revoke"),
			Params:        []Param{id, {Name: "reason", In: "query", Type: TypeString, Description: "Why, kept in the audit trail."}},
			ErrorStatuses: []int{http.StatusForbidden, http.StatusNotFound, http.StatusConflict},
		}, h.Revoke),
		handled(Route{
			Method: http.MethodPost, Path: "/v1/keys/{id}/rotate", Summary: "Replace one of the account's keys with a new one",
			Description: "Creates a key on the account and retires this one: revoked at once, or with `graceSeconds` still working that long and then expired (`" +
				access.MsgExpiredKey + "`). The new key inherits the old one whole: its scopes, its restriction and its expiry (a rotation never removes or extends `expiresAt`); " +
				"the account's plan, credits and rate window are the account's and do not change. A key may rotate itself; rotating another key needs the `management` scope (403 `" +
				access.MsgKeyNeedsManagement + "`). The response shows the new key once (`data.key`) and the replaced key (`replaced`). " +
				"A key revoked, expired or rotated already is a 409, and so is a rotation with grace beyond the account's active keys.",
			Policy: KeyPolicy("keys.rotate"),
			Params: []Param{id, boundedParam("graceSeconds", "", &cryptointel.KeyRotationGraceSeconds,
				boundsDesc("Seconds the old key keeps working", cryptointel.KeyRotationGraceSeconds))},
			SuccessStatus: http.StatusCreated,
			ErrorStatuses: []int{http.StatusForbidden, http.StatusNotFound, http.StatusConflict},
		}, h.Rotate),
	}
}
