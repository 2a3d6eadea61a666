package mcp

import (
	"strings"
	"testing"
)

// latestBody is a body like /v1/latest?limit=25&legacy=false's: 25 events
// with owners, participants, bullets and evidence.
func latestBody() []byte {
	ev := `{"id":1234567,"title":"Acme Protocol announces a partnership with Example Labs \u003cnews\u003e","eventCategory":"partnership","eventSubcategory":"integration",` +
		`"summary":"` + strings.Repeat("Acme and Example Labs will integrate their stacks. ", 6) + `",` +
		`"bullets":["` + strings.Repeat("point one ", 8) + `","` + strings.Repeat("point two ", 8) + `","` + strings.Repeat("point three ", 8) + `"],` +
		`"owners":[{"id":11,"label":"Acme","type":"organization","aliases":["ACME","acme.xyz"]}],` +
		`"participants":[{"id":12,"label":"Example Labs","type":"organization","aliases":[]},{"id":13,"label":"EXM","type":"token","aliases":["exm"]}],` +
		`"evidence":[{"id":9001,"content":"` + strings.Repeat("A post about it, quoted. ", 6) + `","url":"https://x.example/9001","timestamp":"2026-11-20T10:00:00.000Z"},` +
		`{"id":9002,"content":"` + strings.Repeat("Another post. ", 6) + `","url":"https://x.example/9002","timestamp":"2026-11-20T09:00:00.000Z"}],` +
		`"latestEvidenceTimestamp":"2026-11-20T10:00:00.000Z","significance":0.73}`
	evs := make([]string, 25)
	for i := range evs {
		evs[i] = ev
	}
	return []byte(`{"window":"24h","sort":"significance","limit":25,"offset":0,"since":null,"data":[` + strings.Join(evs, ",") + `]}` + "\n")
}

// BenchmarkOutput: a latest_events call's result made from its route's
// body (detail full) and written as its JSON-RPC response.
func BenchmarkOutput(b *testing.B) {
	s := testServer(b)
	t := s.byName[toolLatest]
	a, err := parseArgs(t.def.Name, t.args, []byte(`{"limit":25,"detail":"full"}`))
	if err != nil {
		b.Fatal(err)
	}
	body := latestBody()
	b.Logf("body %d bytes", len(body))
	buf := make([]byte, 0, 128<<10)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		out := s.output(t, a, [][]byte{body}, nil)
		buf = appendOutput(buf[:0], []byte("1"), out)
		out.release()
	}
}
