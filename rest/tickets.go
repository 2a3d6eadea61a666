package rest

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
)

// TicketMinter mints stream tickets (access.Service.MintTicket).
type TicketMinter func(keyHash []byte, path string, query url.Values, now time.Time) (string, time.Time, error)

// TicketRoute is the route-table entry of POST /v1/stream/tickets: a
// browser page, whose EventSource cannot send Authorization, asks with
// its key for a ticket that opens one stream URL for a few minutes.
func TicketRoute(mint TicketMinter, now func() time.Time) Route {
	return handled(Route{
		Method: http.MethodPost, Path: "/v1/stream/tickets", Summary: "A short-lived ticket that opens one stream from a browser",
		Description: "For a browser's `EventSource`, which cannot send `Authorization`: returns a ticket, signed by the server, that opens the " +
			"stream at `path` with exactly the parameters of `query` (in any order), as the calling key, for " + access.TicketTTL.String() +
			". Open `data.url` (the stream URL with `ticket=` added); the stream is the key's: metered, capped and closed as if it had sent the key. " +
			"The ticket names the key by its hash, never the key; it may open its stream again until it expires (an EventSource's reconnections), " +
			"and a stream opened in time runs on after. Another path or query, or an expired ticket, is a 401 (`" + access.MsgInvalidTicket + "`). " +
			"Does not consume credits.",
		Policy: access.Policy{Surface: "keys", Layer: access.LayerEvaluation, Name: "stream.tickets", CreditCost: 0},
		Params: []Param{
			{Name: "path", In: "query", Type: TypeString, Required: true, Enum: access.TicketPaths, Description: "The stream route the ticket opens."},
			{Name: "query", In: "query", Type: TypeString, Description: "The stream URL's query string (without `?`), for example `category=defi&since=2026-11-20T00:00:00Z`; empty for none."},
		},
		SuccessStatus: http.StatusCreated,
	}, func(w http.ResponseWriter, r *http.Request) (ticketBody, error) {
		_, call, err := keyCall(r)
		if err != nil {
			return ticketBody{}, err
		}
		scheme, cred := access.ParseAuthorization(r.Header.Get("Authorization"))
		if scheme != "bearer" || cred == "" {
			return ticketBody{}, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "An API key is required to mint stream tickets.")
		}
		q, err := url.ParseQuery(strings.TrimPrefix(call.String("query"), "?"))
		if err != nil {
			return ticketBody{}, cryptointel.Errorf(cryptointel.EINVALID, "query must be a URL query string such as category=defi&since=2026-11-20T00:00:00Z")
		}
		path := call.String("path")
		ticket, exp, err := mint(db.HashAPIKey(cred), path, q, now())
		if err != nil {
			return ticketBody{}, err
		}
		q.Del(access.TicketParam)
		streamQuery := q.Encode()
		target := path + "?" + access.TicketParam + "=" + url.QueryEscape(ticket)
		if streamQuery != "" {
			target = path + "?" + streamQuery + "&" + access.TicketParam + "=" + url.QueryEscape(ticket)
		}
		// Whole seconds: encoding/json writes them as time.RFC3339.
		return ticketBody{Data: streamTicket{Ticket: ticket, Path: path, Query: streamQuery, URL: target, ExpiresAt: exp.UTC().Truncate(time.Second)}}, nil
	})
}

// ticketBody is the body of POST /v1/stream/tickets (its schema is derived
// from the type, goschema.go).
type ticketBody struct {
	Data streamTicket `json:"data"`
}

// streamTicket is a minted ticket and the stream URL it opens.
type streamTicket struct {
	Ticket    string    `json:"ticket"`
	Path      string    `json:"path"`
	Query     string    `json:"query"`
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
}
