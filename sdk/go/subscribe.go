package cryptointel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"net/http"
)

// SubscriptionMessage is one result of a GraphQL subscription: its data
// (shaped like the selection) and the cursor to resume after it.
type SubscriptionMessage struct {
	Data       json.RawMessage
	Cursor     string
	Extensions map[string]any
}

// Subscribe follows a GraphQL subscription (over server-sent events on
// /graphql): each result in order. The document must declare `$after:
// String` and pass it to the field, e.g.
//
//	subscription($after: String, $entityId: Int) { events(after: $after, entityId: $entityId) { id title } }
//
// Without variables["after"] the subscription starts at the cursor of
// "now" (streamCursor, read first). When the connection drops, or the
// server ends the subscription for a reason a reconnect fixes
// (slow_consumer, shutting_down, unavailable), it subscribes again with
// `after` set to the last result's cursor, so no result is lost or
// repeated; reconnects follow the retry policy (each result restarts its
// count). It ends when ctx is done (without error), when the server
// completes the subscription, or at the first error that reconnecting
// cannot fix: a *StreamClosedError when the server closed it for good, a
// *GraphQLError for a document it refuses, an *APIError for a refusal.
func (c *Client) Subscribe(ctx context.Context, query string, variables map[string]any) iter.Seq2[SubscriptionMessage, error] {
	return func(yield func(SubscriptionMessage, error) bool) {
		vars := maps.Clone(variables)
		if vars == nil {
			vars = map[string]any{}
		}
		if after, _ := vars["after"].(string); after == "" {
			var now struct {
				StreamCursor string `json:"streamCursor"`
			}
			if err := c.Query(ctx, `{ streamCursor }`, nil, &now); err != nil {
				if ctx.Err() == nil {
					yield(SubscriptionMessage{}, err)
				}
				return
			}
			vars["after"] = now.StreamCursor
		}
		failures := 0
		for {
			body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
			if err != nil {
				yield(SubscriptionMessage{}, err)
				return
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base.String()+"/graphql", bytes.NewReader(body))
			if err != nil {
				yield(SubscriptionMessage{}, err)
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "text/event-stream")
			resp, err := c.doWith(c.streamHTTP(), req)
			if err != nil {
				retry, fail := c.reconnect(ctx, err, &failures)
				if retry {
					continue
				}
				if fail != nil {
					yield(SubscriptionMessage{}, graphQLRefusal(fail))
				}
				return
			}
			var fatal error
			stopped, completed, resumable := false, false, false
			readErr := readSSEEvents(resp.Body, func(event, data string) bool {
				switch event {
				case "complete":
					completed = true
					return false
				case "next":
				default:
					return true
				}
				var p struct {
					Data       json.RawMessage `json:"data"`
					Errors     json.RawMessage `json:"errors"`
					Extensions map[string]any  `json:"extensions"`
				}
				if err := json.Unmarshal([]byte(data), &p); err != nil {
					fatal = fmt.Errorf("cryptointel: a subscription result: %w", err)
					return false
				}
				if len(p.Errors) > 0 && string(p.Errors) != "null" {
					ge := &GraphQLError{}
					json.Unmarshal(p.Errors, &ge.Errors) //nolint:errcheck
					var code, cursor, msg string
					if len(ge.Errors) > 0 {
						code, _ = ge.Errors[0].Extensions["code"].(string)
						cursor, _ = ge.Errors[0].Extensions["cursor"].(string)
						msg = ge.Errors[0].Message
					}
					if cursor != "" {
						vars["after"] = cursor
					}
					switch {
					case code == "slow_consumer" || code == "shutting_down" || code == "unavailable":
						resumable = true
					case cursor != "":
						fatal = &StreamClosedError{Close: StreamClose{Code: StreamCloseCode(code), Cursor: cursor, Error: msg}}
					default:
						fatal = ge
					}
					return false
				}
				cursor, _ := p.Extensions["cursor"].(string)
				if cursor != "" {
					vars["after"] = cursor
				}
				failures = 0
				if !yield(SubscriptionMessage{Data: p.Data, Cursor: cursor, Extensions: p.Extensions}, nil) {
					stopped = true
					return false
				}
				return true
			})
			resp.Body.Close()
			if stopped || ctx.Err() != nil {
				return
			}
			if fatal != nil {
				yield(SubscriptionMessage{}, fatal)
				return
			}
			if completed {
				return
			}
			// The connection dropped (readErr), or the server asked for a
			// reconnect: subscribe again after the last cursor.
			if failures >= c.retry.MaxRetries && !resumable {
				if readErr == nil {
					readErr = io.ErrUnexpectedEOF
				}
				yield(SubscriptionMessage{}, &ConnectionError{Err: fmt.Errorf("the subscription dropped %d times in a row: %w", failures+1, readErr)})
				return
			}
			failures++
			if c.sleep(ctx, c.backoff(failures-1)) != nil {
				return
			}
		}
	}
}

// graphQLRefusal is err, or the GraphQL errors of a document the server
// refused to run (422), as Query returns them.
func graphQLRefusal(err error) error {
	var ae *APIError
	if errors.As(err, &ae) && ae.StatusCode == http.StatusUnprocessableEntity {
		ge := &GraphQLError{}
		var b struct {
			Errors json.RawMessage `json:"errors"`
		}
		if json.Unmarshal(ae.Body, &b) == nil && json.Unmarshal(b.Errors, &ge.Errors) == nil && len(ge.Errors) > 0 {
			return ge
		}
	}
	return err
}

// readSSEEvents reads server-sent events from r, calling emit with each
// one's event type ("message" when unnamed) and data; it returns when emit
// returns false (nil) or at the read error that ended the stream.
func readSSEEvents(r io.Reader, emit func(event, data string) bool) error {
	return scanSSE(r, func(m sseMessage) bool {
		if !m.hasData && m.event == "" {
			return true
		}
		if m.event == "" {
			m.event = "message"
		}
		return emit(m.event, m.data)
	})
}
