package rest

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
)

// KeyHandlers serve /v1/keys: an account's keys managed with its keys.
//
// Access model: an account is its keys' owner; what a key may do is its
// scopes. A key with the management scope lists the account's keys and
// their audit trail, creates restricted keys and rotates or revokes any
// key of the account. Any other key (the data scope alone, a restricted
// key) sees only itself in the list and may rotate or revoke only itself:
// a leaked data key cannot take the account's other keys. A successor
// inherits its predecessor's scopes, restriction and expiry, and the
// account's meters are the account's, so no key operation resets or
// multiplies credits or the rate window; the account's active keys are
// capped (MaxActiveKeys). Plans are billing decisions: changing one is an
// operator's command (cryptointel keys set-plan), and so is creating an
// unrestricted key or recovering an account (cryptointel keys recover).
// Every change is recorded in the audit trail with the acting key
// ("api_key:<id>") and applies to the next request on every replica.
type KeyHandlers struct {
	// DB runs the key statements.
	DB bun.IDB
	// MaxActiveKeys caps an account's active keys (0:
	// db.DefaultMaxActiveKeys, negative: no cap).
	MaxActiveKeys int
}

// boundsDesc describes an integer parameter of bounds b.
func boundsDesc(what string, b cryptointel.Bounds) string {
	return fmt.Sprintf("%s: %d to %d, default %d.", what, b.Min, b.Max, b.Default)
}

// keyCaller returns the calling account and key, or EUNAUTHORIZED: keys
// belong to accounts, so pay-per-request callers have none.
func keyCaller(r *http.Request) (*access.Caller, error) {
	c, ok := access.CallerFrom(r.Context())
	if !ok || c.AccountID == 0 || c.APIKeyID == 0 {
		return nil, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "An API key is required to manage keys.")
	}
	return c, nil
}

// keyCall returns the caller and the request's parsed parameters.
func keyCall(r *http.Request) (*access.Caller, *Call, error) {
	c, err := keyCaller(r)
	if err != nil {
		return nil, nil, err
	}
	call, err := callOf(r)
	if err != nil {
		return nil, nil, err
	}
	return c, call, nil
}

// keyTarget is keyCall with the key id of the path.
func keyTarget(r *http.Request) (*access.Caller, int64, *Call, error) {
	c, call, err := keyCall(r)
	if err != nil {
		return nil, 0, nil, err
	}
	return c, int64(call.Int("id")), call, nil
}

// mayManage refuses a caller without the management scope acting on
// another key than its own (target 0: on the account's keys at large).
func mayManage(c *access.Caller, target int64) error {
	if c.Manages() || (target != 0 && target == c.APIKeyID) {
		return nil
	}
	return cryptointel.Errorf(cryptointel.EFORBIDDEN, "%s", access.MsgKeyNeedsManagement)
}

// The bodies of the /v1/keys routes (their schemas are derived from
// these types, goschema.go).
type (
	keyList struct {
		Limit  int              `json:"limit"`
		Offset int              `json:"offset"`
		Data   []*db.APIKeyView `json:"data"`
	}
	keyAudit struct {
		Data []*db.KeyAuditEntry `json:"data"`
	}
	keyRevoked struct {
		Data *db.APIKeyView `json:"data"`
	}
	keyCreated struct {
		Data NewAPIKeyJSON `json:"data"`
	}
	keyRotated struct {
		Data     NewAPIKeyJSON  `json:"data"`
		Replaced *db.APIKeyView `json:"replaced"`
	}
)

// List serves GET /v1/keys.
func (h *KeyHandlers) List(w http.ResponseWriter, r *http.Request) (keyList, error) {
	c, call, err := keyCall(r)
	if err != nil {
		return keyList{}, err
	}
	f := db.KeyFilter{AccountID: c.AccountID, Limit: call.Int("limit"), Offset: call.Int("offset")}
	if !c.Manages() {
		f.KeyID = c.APIKeyID
	}
	keys, err := db.ListAPIKeys(r.Context(), h.DB, f)
	if err != nil {
		return keyList{}, err
	}
	return keyList{Limit: call.Int("limit"), Offset: call.Int("offset"), Data: keys}, nil
}

// Audit serves GET /v1/keys/audit.
func (h *KeyHandlers) Audit(w http.ResponseWriter, r *http.Request) (keyAudit, error) {
	c, call, err := keyCall(r)
	if err != nil {
		return keyAudit{}, err
	}
	if err := mayManage(c, 0); err != nil {
		return keyAudit{}, err
	}
	entries, err := db.KeyAudit(r.Context(), h.DB, c.AccountID, call.Int("limit"))
	if err != nil {
		return keyAudit{}, err
	}
	return keyAudit{Data: entries}, nil
}

// Revoke serves DELETE /v1/keys/{id}.
func (h *KeyHandlers) Revoke(w http.ResponseWriter, r *http.Request) (keyRevoked, error) {
	c, id, call, err := keyTarget(r)
	if err != nil {
		return keyRevoked{}, err
	}
	if err := mayManage(c, id); err != nil {
		return keyRevoked{}, err
	}
	k, err := db.RevokeAPIKey(r.Context(), h.DB, db.KeyRevocation{
		KeyID: id, AccountID: c.AccountID, Actor: db.ActorAPIKey(c.APIKeyID), Reason: call.String("reason"),
	})
	if err != nil {
		return keyRevoked{}, err
	}
	return keyRevoked{Data: k}, nil
}

// NewAPIKeyJSON is a key a rotation created: its fields and, this once,
// the key itself.
type NewAPIKeyJSON struct {
	*db.APIKeyView
	// Key is the new API key, shown only in this response.
	Key string `json:"key"`
}

// Rotate serves POST /v1/keys/{id}/rotate.
func (h *KeyHandlers) Rotate(w http.ResponseWriter, r *http.Request) (keyRotated, error) {
	c, id, call, err := keyTarget(r)
	if err != nil {
		return keyRotated{}, err
	}
	if err := mayManage(c, id); err != nil {
		return keyRotated{}, err
	}
	plaintext, created, old, err := db.RotateAPIKey(r.Context(), h.DB, db.KeyRotation{
		KeyID: id, AccountID: c.AccountID, Grace: time.Duration(call.Int("graceSeconds")) * time.Second,
		Actor: db.ActorAPIKey(c.APIKeyID), MaxActive: h.MaxActiveKeys,
	})
	if err != nil {
		return keyRotated{}, err
	}
	w.Header().Set("Location", "/v1/keys/"+strconv.FormatInt(created.ID, 10))
	return keyRotated{Data: NewAPIKeyJSON{created, plaintext}, Replaced: old}, nil
}

// Create serves POST /v1/keys: a restricted key made by a management key.
func (h *KeyHandlers) Create(w http.ResponseWriter, r *http.Request) (keyCreated, error) {
	c, call, err := keyCall(r)
	if err != nil {
		return keyCreated{}, err
	}
	if err := mayManage(c, 0); err != nil {
		return keyCreated{}, err
	}
	var expiresAt *time.Time
	if call.Given["expiresInSeconds"] {
		if call.Int("expiresInSeconds") < 1 {
			return keyCreated{}, cryptointel.Errorf(cryptointel.EINVALID, "expiresInSeconds must be 1 or more.")
		}
		t := time.Now().Add(time.Duration(call.Int("expiresInSeconds")) * time.Second)
		expiresAt = &t
	}
	surfaces, _ := call.Values["surfaces"].([]string)
	plaintext, created, err := db.CreateRestrictedKey(r.Context(), h.DB, db.RestrictedKey{
		AccountID: c.AccountID, FromKeyID: c.APIKeyID, Surfaces: surfaces, ExpiresAt: expiresAt,
		Actor: db.ActorAPIKey(c.APIKeyID), MaxActive: h.MaxActiveKeys,
	})
	if err != nil {
		return keyCreated{}, err
	}
	w.Header().Set("Location", "/v1/keys/"+strconv.FormatInt(created.ID, 10))
	return keyCreated{Data: NewAPIKeyJSON{created, plaintext}}, nil
}
