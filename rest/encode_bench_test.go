package rest

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cryptointel/cryptointel/graph/jsonw"
)

// latestData is what the Latest operation returns for a page of n full
// events (canonical and legacy fields), shaped like the executor's data.
func latestData(b *testing.B, n int) json.RawMessage {
	b.Helper()
	ref := func(id int) map[string]any {
		return map[string]any{"id": id, "label": fmt.Sprintf("Entity %d", id), "type": "project", "aliases": []string{"ENT", "Entity"}}
	}
	nodes := make([]map[string]any, n)
	for i := range nodes {
		id := 900000 + i
		evidence := []map[string]any{}
		for j := range 3 {
			evidence = append(evidence, map[string]any{"id": id*10 + j, "content": fmt.Sprintf("A source post about event %d, number %d, with a sentence or two of text as posts have.", id, j),
				"url": fmt.Sprintf("https://example.org/posts/%d/%d", id, j), "timestamp": "2026-11-22T10:15:00.000Z"})
		}
		owners := []map[string]any{ref(101)}
		parts := []map[string]any{ref(102), ref(103)}
		bullets := []string{"The first point of the summary", "A second point with a number 42", "A third point"}
		summary := fmt.Sprintf("Summary of event %d: what happened, who was involved and why it may matter to the market.", id)
		sig := 7.25
		nodes[i] = map[string]any{
			"id": id, "title": fmt.Sprintf("Event %d: a partnership between two projects", id), "eventCategory": "partnership", "eventSubcategory": "integration",
			"summary": summary, "bullets": bullets, "owners": owners, "participants": parts, "evidence": evidence,
			"latestEvidenceTimestamp": "2026-11-22T10:15:00.000Z", "significance": sig,
			"globalSummary": summary, "bulletSummary": bullets, "eventOwner": owners, "eventParticipants": parts, "posts": evidence,
			"latestPostTimestamp": "2026-11-22T10:15:00.000Z", "signal": sig,
		}
	}
	data, err := json.Marshal(map[string]any{"events": map[string]any{
		"limit": n, "offset": 0, "since": "2026-11-21T12:00:00.000Z", "data": nodes,
	}})
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// The /v1/latest?limit=25 response after the executor: the body written
// from the operation's data (its shape), then written as a response.
func BenchmarkLatestEnvelopeEncode(b *testing.B) {
	route := routeFor(b, "GET", "/v1/latest")
	req := httptest.NewRequest("GET", "/v1/latest?limit=25", nil)
	c, err := parseCall(route, req, time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	if err != nil {
		b.Fatal(err)
	}
	if err := route.Prepare(c); err != nil {
		b.Fatal(err)
	}
	data := latestData(b, 25)
	marks, err := jsonw.MarkData(data, 0)
	if err != nil {
		b.Fatal(err)
	}
	sh, err := shapeOf(c.Operation)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		body, err := sh.body(c, newData(data, marks), nil)
		if err != nil {
			b.Fatal(err)
		}
		w := httptest.NewRecorder()
		writeBody(w, 200, body)
	}
}

// The response framing of a 25-event page: strong ETag, and gzip when the
// client accepts it.
func BenchmarkEncodingWriterFinish(b *testing.B) {
	body := latestData(b, 25)
	for _, enc := range []string{"identity", "gzip"} {
		b.Run(enc, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/v1/latest?limit=25", nil)
			if enc == "gzip" {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				ew := newEncodingWriter(w, req)
				ew.Write(body) //nolint:errcheck
				ew.finish()
			}
		})
	}
}
