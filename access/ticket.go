package access

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
)

// TicketParam is the query parameter that carries a stream ticket.
const TicketParam = "ticket"

// TicketTTL is how long a stream ticket opens its stream. A stream opened
// in time runs on; an EventSource that reconnects after it needs a new one.
const TicketTTL = 5 * time.Minute

// TicketPaths are the stream routes a ticket may be minted for.
var TicketPaths = []string{"/v1/stream", "/graphql"}

// MsgInvalidTicket is the 401 of a stream opened with a ticket that is not
// valid for it: forged, expired, or minted for another route or query.
const MsgInvalidTicket = "Invalid or expired stream ticket: mint a new one with POST /v1/stream/tickets for this exact stream URL (tickets open their stream for 5 minutes)."

// tickets mints and checks stream tickets: stateless, signed with a key
// derived from the server's secret, so every replica that shares the
// secret accepts the tickets of the others. A ticket names the key (by
// its hash, never the key), one stream path and its query, and an expiry.
type tickets struct{ mac []byte }

// newTickets derives the tickets' signing key from secret; an empty
// secret disables tickets.
func newTickets(secret string) *tickets {
	if secret == "" {
		return nil
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("cryptointel stream ticket v1")) //nolint:errcheck // a hash never fails
	return &tickets{mac: m.Sum(nil)}
}

// ticketClaims is the signed content of a ticket.
type ticketClaims struct {
	Key     string `json:"k"` // hex SHA-256 of the API key
	Path    string `json:"p"`
	Query   string `json:"q"`
	Expires int64  `json:"e"` // Unix seconds
}

// canonicalQuery is a stream URL's query without the ticket, its
// parameters sorted, so that a ticket binds the query however it is
// written.
func canonicalQuery(q url.Values) string {
	q = maps.Clone(q)
	q.Del(TicketParam)
	return q.Encode()
}

func (t *tickets) sign(payload string) string {
	m := hmac.New(sha256.New, t.mac)
	m.Write([]byte(payload)) //nolint:errcheck // a hash never fails
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// mint returns a ticket for the key of keyHash to open path with query
// until now+TicketTTL.
func (t *tickets) mint(keyHash []byte, path string, query url.Values, now time.Time) (string, time.Time) {
	exp := now.Add(TicketTTL).Truncate(time.Second)
	b, _ := json.Marshal(ticketClaims{Key: hex.EncodeToString(keyHash), Path: path, Query: canonicalQuery(query), Expires: exp.Unix()})
	payload := base64.RawURLEncoding.EncodeToString(b)
	return payload + "." + t.sign(payload), exp
}

// check returns the key hash of r's ticket when it is genuine, unexpired
// and minted for r's path and query.
func (t *tickets) check(r *http.Request, now time.Time) ([]byte, bool) {
	q := r.URL.Query()
	payload, sig, ok := strings.Cut(q.Get(TicketParam), ".")
	if !ok || subtle.ConstantTimeCompare([]byte(sig), []byte(t.sign(payload))) != 1 {
		return nil, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	var c ticketClaims
	if err != nil || json.Unmarshal(raw, &c) != nil {
		return nil, false
	}
	if now.Unix() >= c.Expires || c.Path != r.URL.Path || c.Query != canonicalQuery(q) {
		return nil, false
	}
	hash, err := hex.DecodeString(c.Key)
	return hash, err == nil && len(hash) == sha256.Size
}

// streamTicket reads the ticket of a stream request sent without
// Authorization: the key hash it stands for, with the ticket taken off the
// URL so the route sees only its own parameters. nil, nil when the request
// carries no ticket (or is no stream, or sends Authorization).
func (s *Service) streamTicket(r *http.Request, stream bool, scheme string, now time.Time) ([]byte, *cryptointel.Error) {
	if !stream || scheme != "" || !r.URL.Query().Has(TicketParam) {
		return nil, nil
	}
	if s.tickets == nil {
		return nil, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, MsgInvalidTicket)
	}
	hash, ok := s.tickets.check(r, now)
	if !ok {
		return nil, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, MsgInvalidTicket)
	}
	q := r.URL.Query()
	q.Del(TicketParam)
	r.URL.RawQuery = q.Encode()
	return hash, nil
}

// MintTicket returns a ticket that opens the stream at path with query,
// as the key of keyHash, for TicketTTL, and when it expires. It is an
// error for a path that is not a stream route (TicketPaths) or when the
// service has no secret to sign with.
func (s *Service) MintTicket(keyHash []byte, path string, query url.Values, now time.Time) (string, time.Time, error) {
	if !slices.Contains(TicketPaths, path) {
		return "", time.Time{}, cryptointel.Errorf(cryptointel.EINVALID, "path must be one of: %s", strings.Join(TicketPaths, ", "))
	}
	if s.tickets == nil {
		return "", time.Time{}, cryptointel.Errorf(cryptointel.EUNAVAILABLE, "Stream tickets are not configured on this server (it has no CURSOR_SECRET).")
	}
	t, exp := s.tickets.mint(keyHash, path, query, now)
	return t, exp, nil
}
