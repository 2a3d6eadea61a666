package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

var updateOutputs = flag.Bool("update", false, "rewrite testdata/mcp_tool_outputs.golden")

// mcpOutputCases are the tool calls whose responses
// TestMCPToolOutputsUnchanged holds byte for byte: every tool but usage
// (its counts move with each call), at detail summary and full, events
// with owners, participants, bullets and evidence, search's matchedVia,
// composed results and results without events.
var mcpOutputCases = []struct{ tool, args string }{
	{"latest_events", `{"limit":25,"detail":"full"}`},
	{"latest_events", `{"limit":25}`},
	{"latest_events", `{"surface":"signal","window":"7d","sort":"recency","limit":5,"detail":"full"}`},
	{"latest_events", `{"offset":1000000000,"detail":"full"}`},
	{"search_events", `{"query":"Ethereum","detail":"full"}`},
	{"search_events", `{"query":"Ethereum"}`},
	{"search_events", `{"query":"listing","limit":7,"facets":true,"detail":"full"}`},
	{"search_events", `{"query":"zzzz nothing matches this"}`},
	{"resolve_entity", `{"name":"eth","limit":3}`},
	{"get_entity", `{"id":101,"relationships_limit":5}`},
	{"list_relationships", `{"id":101,"limit":3}`},
	{"entity_timeline", `{"id":101,"limit":6,"detail":"full"}`},
	{"entity_timeline", `{"id":101,"limit":6}`},
	{"top_signals", `{"limit":5,"detail":"full"}`},
	{"top_signals", `{"limit":5}`},
	{"organization_brief", `{"ids":[101],"since":"2026-11-13T12:00:00Z","limit":3,"detail":"full"}`},
	{"organization_brief", `{"ids":[101],"since":"2026-11-13T12:00:00Z"}`},
	{"organization_brief", `{"ids":[101,103,999],"since":"2026-11-13T12:00:00Z","limit":2,"detail":"full"}`},
	{"signal_history", `{"id":101,"days":7}`},
	{"prediction_markets", `{"id":101}`},
	{"search", `{"query":"Ethereum staking"}`},
	{"fetch", `{"id":"1"}`},
}

// TestMCPToolOutputsUnchanged: each tool call of mcpOutputCases, made in
// process on a seeded service at a fixed instant, answers the very bytes
// it answered when testdata/mcp_tool_outputs.golden was written (its
// SHA-256 and length per call): the lean pass and the text are rewritten
// for speed, never for output. With MCP_OUTPUT_DUMP set to a directory,
// each response is written there too, to diff two builds' bytes. -update
// rewrites the golden file.
func TestMCPToolOutputsUnchanged(t *testing.T) {
	ctx := context.Background()
	a := seededApp(t, dbtest.NewURL(t), 4, 2000, "mcp-outputs")
	key, _, err := db.CreateAPIKey(ctx, a.DB.Bun, "mcp-outputs", cryptointel.PlanEnterprise)
	if err != nil {
		t.Fatal(err)
	}
	dump := os.Getenv("MCP_OUTPUT_DUMP")
	call := func(i int, key string) (int, []byte) {
		c := mcpOutputCases[i]
		r := toolCall(c.tool, c.args, key)
		r.Header.Set("X-Request-Id", fmt.Sprintf("outputs-%d", i))
		w := httptest.NewRecorder()
		a.Handler.ServeHTTP(w, r)
		return w.Code, w.Body.Bytes()
	}
	var got strings.Builder
	sums := make([][sha256.Size]byte, len(mcpOutputCases))
	for i, c := range mcpOutputCases {
		code, out := call(i, key)
		if code != http.StatusOK || len(out) < 200 {
			t.Fatalf("%s %s: %d %s", c.tool, c.args, code, out)
		}
		sum := sha256.Sum256(out)
		sums[i] = sum
		fmt.Fprintf(&got, "%s %s %d %s\n", c.tool, c.args, len(out), hex.EncodeToString(sum[:]))
		if dump != "" {
			if err := os.WriteFile(filepath.Join(dump, fmt.Sprintf("%02d-%s.json", i, c.tool)), out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The same calls from four clients at once, each in its own order:
	// the buffers a call hands back (its route's lent body, its text) are
	// the next calls' while other calls run, and no response may change.
	var wg sync.WaitGroup
	for g := range 4 {
		// A key each: a key's rate window holds fewer calls than all of
		// them.
		key, _, err := db.CreateAPIKey(ctx, a.DB.Bun, fmt.Sprintf("mcp-outputs-%d", g), cryptointel.PlanEnterprise)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for k := range 2 * len(mcpOutputCases) {
				i := (k*(2*g+1) + g) % len(mcpOutputCases)
				if code, out := call(i, key); code != http.StatusOK || sha256.Sum256(out) != sums[i] {
					c := mcpOutputCases[i]
					t.Errorf("%s %s, called beside others: %d, %d bytes, not the bytes it answers alone", c.tool, c.args, code, len(out))
				}
			}
		})
	}
	wg.Wait()
	golden := filepath.Join("testdata", "mcp_tool_outputs.golden")
	if *updateOutputs {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("tool outputs changed (MCP_OUTPUT_DUMP=dir writes them; -update rewrites the golden file):\ngot:\n%swant:\n%s", got.String(), want)
	}
}
