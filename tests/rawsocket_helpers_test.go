package tests

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rawSocket is a WebSocket client written for the tests that must send
// handshakes no real client sends (odd Upgrade and Connection spellings,
// repeated headers) and open thousands of sockets cheaply: it writes the
// handshake by hand, then speaks graphql-transport-ws in text frames.
type rawSocket struct {
	conn net.Conn
	br   *bufio.Reader
}

// rawHandshake sends a GET (or method) to path on base with the header
// lines given verbatim ("Name: value", repeats allowed) after Host, a
// WebSocket key and version and the graphql-transport-ws subprotocol. It
// returns the response; on 101 the socket, otherwise nil (the connection
// is closed and the body read when it has a length).
func rawHandshake(t testing.TB, base, method, path string, lines ...string) (*http.Response, []byte, *rawSocket) {
	t.Helper()
	return rawExchange(t, base, method, path, "", lines...)
}

// rawExchange is rawHandshake with a request body (sent with its
// Content-Length when not empty). An event-stream answer to a POST
// (graphql-sse) is read until its complete event (or the server closes
// it).
func rawExchange(t testing.TB, base, method, path, reqBody string, lines ...string) (*http.Response, []byte, *rawSocket) {
	t.Helper()
	addr := strings.TrimPrefix(base, "http://")
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	key := make([]byte, 16)
	rand.Read(key) //nolint:errcheck
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, addr)
	for _, l := range lines {
		b.WriteString(l + "\r\n")
	}
	b.WriteString("Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(key) + "\r\n")
	b.WriteString("Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n")
	if reqBody != "" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(reqBody))
	}
	b.WriteString("\r\n" + reqBody)
	conn.SetDeadline(time.Now().Add(30 * time.Second)) //nolint:errcheck
	_, err = io.WriteString(conn, b.String())
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	require.NoError(t, err, "%s %s: no answer to the handshake", method, path)
	if resp.StatusCode == http.StatusSwitchingProtocols {
		conn.SetDeadline(time.Time{}) //nolint:errcheck
		return resp, nil, &rawSocket{conn: conn, br: br}
	}
	defer conn.Close()
	var body []byte
	switch {
	case strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
		if method != http.MethodPost {
			break // a live stream (/v1/stream): its headers are the answer
		}
		rb := bufio.NewReader(resp.Body)
		var sb strings.Builder
		for !strings.Contains(sb.String(), "event: complete") {
			line, err := rb.ReadString('\n')
			sb.WriteString(line)
			if err != nil {
				break
			}
		}
		body = []byte(sb.String())
	case resp.ContentLength >= 0 || len(resp.TransferEncoding) > 0:
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	}
	return resp, body, nil
}

// send writes v as one masked text frame.
func (s *rawSocket) send(t testing.TB, v any) {
	t.Helper()
	payload, err := json.Marshal(v)
	require.NoError(t, err)
	frame := []byte{0x81}
	n := len(payload)
	switch {
	case n < 126:
		frame = append(frame, 0x80|byte(n))
	case n < 1<<16:
		frame = append(frame, 0x80|126, byte(n>>8), byte(n))
	default:
		frame = append(frame, 0x80|127)
		frame = binary.BigEndian.AppendUint64(frame, uint64(n))
	}
	mask := make([]byte, 4)
	rand.Read(mask) //nolint:errcheck
	frame = append(frame, mask...)
	for i, c := range payload {
		frame = append(frame, c^mask[i%4])
	}
	s.conn.SetWriteDeadline(time.Now().Add(10 * time.Second)) //nolint:errcheck
	_, err = s.conn.Write(frame)
	require.NoError(t, err)
}

// rawClosed is what recv returns when the server closed the socket: its
// close code and reason.
type rawClosed struct {
	code   int
	reason string
}

// recv reads the next text message as JSON within timeout, answering
// control frames on the way. A close frame is returned as *rawClosed
// (code and reason); a dropped connection as an error.
func (s *rawSocket) recv(timeout time.Duration) (map[string]any, *rawClosed, error) {
	s.conn.SetReadDeadline(time.Now().Add(timeout)) //nolint:errcheck
	for {
		var hdr [2]byte
		if _, err := io.ReadFull(s.br, hdr[:]); err != nil {
			return nil, nil, err
		}
		op := hdr[0] & 0x0f
		n := uint64(hdr[1] & 0x7f)
		switch n {
		case 126:
			var l [2]byte
			if _, err := io.ReadFull(s.br, l[:]); err != nil {
				return nil, nil, err
			}
			n = uint64(binary.BigEndian.Uint16(l[:]))
		case 127:
			var l [8]byte
			if _, err := io.ReadFull(s.br, l[:]); err != nil {
				return nil, nil, err
			}
			n = binary.BigEndian.Uint64(l[:])
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(s.br, payload); err != nil {
			return nil, nil, err
		}
		switch op {
		case 0x1:
			var m map[string]any
			if err := json.Unmarshal(payload, &m); err != nil {
				return nil, nil, fmt.Errorf("not JSON: %q", payload)
			}
			return m, nil, nil
		case 0x8:
			c := &rawClosed{}
			if len(payload) >= 2 {
				c.code = int(binary.BigEndian.Uint16(payload))
				c.reason = string(payload[2:])
			}
			return nil, c, nil
		case 0x9: // ping: answer pong with the same payload
			s.control(0x8a, payload)
		}
	}
}

// control writes a masked control frame.
func (s *rawSocket) control(first byte, payload []byte) {
	frame := []byte{first, 0x80 | byte(len(payload)), 0, 0, 0, 0}
	frame = append(frame, payload...)
	s.conn.Write(frame) //nolint:errcheck
}

// next reads messages until one of type typ (skipping keep-alives and
// pings, which it answers), failing on a close or a timeout.
func (s *rawSocket) next(t testing.TB, typ string) map[string]any {
	t.Helper()
	for {
		m, closed, err := s.recv(20 * time.Second)
		require.NoError(t, err, "waiting for %s", typ)
		require.Nil(t, closed, "closed while waiting for %s: %+v", typ, closed)
		switch m["type"] {
		case typ:
			return m
		case "ping":
			s.send(t, map[string]any{"type": "pong"})
		case "pong", "ka":
		default:
			require.Equal(t, typ, m["type"], "unexpected message %v", m)
		}
	}
}

// init sends connection_init with payload and waits for the ack.
func (s *rawSocket) init(t testing.TB, payload map[string]any) {
	t.Helper()
	s.send(t, map[string]any{"type": "connection_init", "payload": payload})
	s.next(t, "connection_ack")
}

// query runs one operation on the socket and returns its result (the
// payload of next, or {"errors": …} of an error message).
func (s *rawSocket) query(t testing.TB, id, query string) map[string]any {
	t.Helper()
	s.send(t, map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query}})
	for {
		m, closed, err := s.recv(30 * time.Second)
		require.NoError(t, err)
		require.Nil(t, closed, "closed during operation %s: %+v", id, closed)
		switch m["type"] {
		case "next":
			p, _ := m["payload"].(map[string]any)
			s.next(t, "complete")
			return p
		case "error":
			return map[string]any{"errors": m["payload"]}
		case "ping":
			s.send(t, map[string]any{"type": "pong"})
		}
	}
}

// closeNow drops the connection.
func (s *rawSocket) closeNow() { s.conn.Close() }
