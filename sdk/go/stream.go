package cryptointel

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
)

// StreamEvent is one message of /v1/stream: its id (the cursor to resume
// after it) and its data (one event in the /v1 shape).
type StreamEvent struct {
	ID   string
	Data json.RawMessage
}

// Event decodes the message's event.
func (e StreamEvent) Event() (Event, error) {
	var ev Event
	err := ev.UnmarshalJSON(e.Data)
	return ev, err
}

// StreamClosedError is a stream the server ended for good (its `event:
// close` message with a code that reconnecting cannot fix).
type StreamClosedError struct{ Close StreamClose }

func (e *StreamClosedError) Error() string {
	return fmt.Sprintf("cryptointel: stream closed by the server: %s (%s)", e.Close.Error, e.Close.Code)
}

// Stream follows GET /v1/stream: each pushed event in order. When the
// connection drops, or the server closes the stream for a reason a
// reconnect fixes (slow_consumer, shutting_down, unavailable), it connects
// again with Last-Event-ID set to the last id received, so no event is
// lost or repeated; reconnects follow the retry policy (each success
// restarts its count). It ends when ctx is done (without error) or at the
// first error that reconnecting cannot fix.
func (c *Client) Stream(ctx context.Context, params GetV1StreamParams) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) {
		last := ""
		if params.LastEventID != nil {
			last = *params.LastEventID
		}
		failures := 0
		for {
			p := params
			if last != "" {
				p.LastEventID = &last
			}
			req, err := NewGetV1StreamRequest(c.base.String(), &p)
			if err != nil {
				yield(StreamEvent{}, err)
				return
			}
			req = req.WithContext(ctx)
			req.Header.Set("Accept", "text/event-stream")
			resp, err := c.doWith(c.streamHTTP(), req)
			if err != nil {
				retry, fail := c.reconnect(ctx, err, &failures)
				if retry {
					continue
				}
				if fail != nil {
					yield(StreamEvent{}, fail)
				}
				return
			}
			// A read error is a cut connection: resume after last.
			got, closeMsg, _ := readSSE(resp.Body, func(ev StreamEvent) bool {
				last = ev.ID
				return yield(ev, nil)
			}, &last)
			resp.Body.Close()
			if !got || ctx.Err() != nil {
				return // the caller stopped, or ctx is done
			}
			if closeMsg != nil {
				switch closeMsg.Code {
				case "slow_consumer", "shutting_down", "unavailable":
				default:
					yield(StreamEvent{}, &StreamClosedError{Close: *closeMsg})
					return
				}
				if closeMsg.Cursor != "" {
					last = closeMsg.Cursor
				}
			}
			failures = 0
			if c.sleep(ctx, c.backoff(0)) != nil {
				return
			}
		}
	}
}

// reconnect is a stream's answer to a failed connect (Stream, Subscribe):
// retry, after the backoff, on a connection error within the retry policy;
// else stop, with the error to report (nil when ctx is done or the wait
// was cut short).
func (c *Client) reconnect(ctx context.Context, err error, failures *int) (retry bool, fail error) {
	if ctx.Err() != nil {
		return false, nil
	}
	var ce *ConnectionError
	if !errors.As(err, &ce) || *failures >= c.retry.MaxRetries {
		return false, err
	}
	*failures++
	return c.sleep(ctx, c.backoff(*failures-1)) == nil, nil
}

// streamHTTP is the client's HTTP client without its per-request timeout
// (a stream lasts as long as its reader wants).
func (c *Client) streamHTTP() *http.Client {
	hc := *c.http
	hc.Timeout = 0
	return &hc
}

// readSSE reads messages from r, calling emit for each event with data;
// an id line without data (the stream's starting point) only moves
// *last. It returns false when emit asked to stop, the close message when
// the server sent one, and the read error that ended it.
func readSSE(r io.Reader, emit func(StreamEvent) bool, last *string) (bool, *StreamClose, error) {
	var cl *StreamClose
	stopped := false
	err := scanSSE(r, func(m sseMessage) bool {
		if m.event == "close" {
			cl = &StreamClose{}
			json.Unmarshal([]byte(m.data), cl) //nolint:errcheck
			return false
		}
		if m.id != "" {
			*last = m.id
		}
		if m.hasData && !emit(StreamEvent{ID: m.id, Data: json.RawMessage(m.data)}) {
			stopped = true
			return false
		}
		return true
	})
	if stopped {
		return false, nil, nil
	}
	if cl != nil {
		return true, cl, nil
	}
	return true, nil, err
}

// sseMessage is one dispatched server-sent event: its id, event type and
// data lines joined ("" and hasData false when it had none).
type sseMessage struct {
	id, event, data string
	hasData         bool
}

// scanSSE reads server-sent events from r (the WHATWG event-stream
// format), calling dispatch at each blank line; it returns nil when
// dispatch returns false, or the read error that ended the stream.
func scanSSE(r io.Reader, dispatch func(sseMessage) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var m sseMessage
	var data strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			m.data = data.String()
			if !dispatch(m) {
				return nil
			}
			m = sseMessage{}
			data.Reset()
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			m.id = value
		case "event":
			m.event = value
		case "data":
			if m.hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			m.hasData = true
		}
	}
}
