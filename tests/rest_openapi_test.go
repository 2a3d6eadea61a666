package tests

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/rest"
)

// swaggerParserVersion is the pinned npm validator.
const swaggerParserVersion = "12.1.0"

// fetchOpenAPI gets /openapi.json without an API key.
func fetchOpenAPI(t *testing.T, s *restServer) []byte {
	t.Helper()
	resp, err := http.Get(s.base + "/openapi.json")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "application/json; charset=utf-8", resp.Header.Get("Content-Type"))
	require.NotEmpty(t, resp.Header.Get("X-Request-Id"))
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return b
}

// TestRESTOpenAPIDocument checks the generated document against the table:
// version, every route and method, parameter bounds and defaults, pricing
// extensions, security and error responses.
func TestRESTOpenAPIDocument(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(fetchOpenAPI(t, s), &doc))
	require.Equal(t, "3.1.0", doc["openapi"])
	require.Equal(t, "1.0.0", doc["info"].(map[string]any)["version"])
	require.Contains(t, doc["components"].(map[string]any)["securitySchemes"], "bearerAuth")

	paths := doc["paths"].(map[string]any)
	for _, r := range s.app.V1Routes() {
		item, ok := paths[r.Path].(map[string]any)
		require.True(t, ok, "%s missing", r.Path)
		op, ok := item[strings.ToLower(r.Method)].(map[string]any)
		require.True(t, ok, "%s %s missing", r.Method, r.Path)
		require.Equal(t, r.Policy.Name, op["x-endpoint-policy"])
		require.Equal(t, r.Policy.Layer, op["x-access-layer"])
		responses := op["responses"].(map[string]any)
		require.Contains(t, responses, "400")
		require.Contains(t, responses, "500")
		if r.Policy.Pricing != nil {
			pi := op["x-payment-info"].(map[string]any)
			require.Equal(t, r.Policy.Pricing.Mode, pi["mode"])
			require.Equal(t, []any{"x402", "mpp"}, pi["protocols"])
			require.Contains(t, responses, "402")
		} else {
			require.NotContains(t, op, "x-payment-info")
		}
		params := map[string]map[string]any{}
		for _, p := range jsonList(op["parameters"]) {
			pm := p.(map[string]any)
			params[pm["name"].(string)] = pm
		}
		for _, p := range r.Params {
			pm, ok := params[p.Name]
			require.True(t, ok, "%s: parameter %s undocumented", r.Path, p.Name)
			sch := pm["schema"].(map[string]any)
			if p.Max != nil {
				require.EqualValues(t, *p.Max, sch["maximum"], "%s %s maximum", r.Path, p.Name)
			}
			if p.Min != nil {
				require.EqualValues(t, *p.Min, sch["minimum"], "%s %s minimum", r.Path, p.Name)
			}
			if p.Default != nil {
				require.EqualValues(t, p.Default, sch["default"], "%s %s default", r.Path, p.Name)
			}
			for _, a := range p.Aliases {
				require.Contains(t, params, a, "%s: alias %s undocumented", r.Path, a)
			}
		}
	}
	// The live stream: an event stream of /v1 events, resumable by header.
	stream := paths["/v1/stream"].(map[string]any)["get"].(map[string]any)
	ok200 := stream["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)
	require.Equal(t, []string{"text/event-stream"}, slices.Collect(maps.Keys(ok200)))
	sse := ok200["text/event-stream"].(map[string]any)
	require.Equal(t, map[string]any{"$ref": "#/components/schemas/Event"}, sse["x-sse-data-schema"])
	require.Equal(t, map[string]any{"$ref": "#/components/schemas/StreamClose"}, sse["x-sse-close-schema"])
	require.Contains(t, doc["components"].(map[string]any)["schemas"], "StreamClose")
	in := map[string]string{}
	for _, p := range jsonList(stream["parameters"]) {
		pm := p.(map[string]any)
		in[pm["name"].(string)] = pm["in"].(string)
	}
	require.Equal(t, map[string]string{"surface": "query", "category": "query", "organizationId": "query",
		"entityId": "query", "cursor": "query", "legacy": "query", "Last-Event-ID": "header"}, in)
	require.Contains(t, stream["responses"], "429", "the per-key cap of open streams")

	search := paths["/v1/search"].(map[string]any)["get"].(map[string]any)["x-payment-info"].(map[string]any)
	require.Equal(t, "0.050000", search["price"])
	latest := paths["/v1/latest"].(map[string]any)["get"].(map[string]any)["x-payment-info"].(map[string]any)
	require.Equal(t, "0.005000", latest["min"])
	require.Equal(t, "0.125000", latest["max"])
}

func jsonList(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestRESTOpenAPIValidates runs the standard validator
// (@apidevtools/swagger-parser from npm) on the served document.
func TestRESTOpenAPIValidates(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx not found: install Node.js and npm to validate /openapi.json with @apidevtools/swagger-parser")
	}
	s := startRESTServer(t)
	file := filepath.Join(t.TempDir(), "openapi.json")
	require.NoError(t, os.WriteFile(file, fetchOpenAPI(t, s), 0o644))

	modules := swaggerParserModules(t)
	script := `const p = require(process.argv[1]);
p.validate(process.argv[2]).then(api => { console.log("valid: " + api.info.title + " " + api.info.version); },
  err => { console.error(err.message); process.exit(1); });`
	out, err := exec.Command("node", "-e", script, filepath.Join(modules, "@apidevtools", "swagger-parser"), file).CombinedOutput()
	require.NoError(t, err, "swagger-parser rejected /openapi.json:\n%s", out)
	require.Contains(t, string(out), "valid: cryptointel API 1.0.0")
}

// swaggerParserModules installs the pinned validator once per machine (in
// the user cache directory) and returns its node_modules directory.
func swaggerParserModules(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "cryptointel", "swagger-parser-"+swaggerParserVersion)
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "@apidevtools", "swagger-parser", "package.json")); err == nil {
		return modules
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o755))
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	require.NoError(t, err)
	defer os.RemoveAll(tmp)
	cmd := exec.Command("npm", "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error",
		"@apidevtools/swagger-parser@"+swaggerParserVersion)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "npm install @apidevtools/swagger-parser:\n%s", out)
	if err := os.Rename(tmp, dir); err != nil {
		// Another run installed it meanwhile.
		_, statErr := os.Stat(filepath.Join(modules, "@apidevtools", "swagger-parser", "package.json"))
		require.NoError(t, statErr, "installing swagger-parser: %v", err)
	}
	return modules
}

// openAPIValidator compiles response schemas out of the served document.
type openAPIValidator struct {
	t        *testing.T
	compiler *jsonschema.Compiler
	doc      map[string]any
	cache    map[string]*jsonschema.Schema
}

const openAPIURL = "https://cryptointel.test/openapi.json"

func newOpenAPIValidator(t *testing.T, raw []byte) *openAPIValidator {
	t.Helper()
	docAny, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	require.NoError(t, c.AddResource(openAPIURL, docAny))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	return &openAPIValidator{t: t, compiler: c, doc: doc, cache: map[string]*jsonschema.Schema{}}
}

// pointer escapes a JSON pointer token.
func jsonPointer(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// validate checks body against the documented schema of method path for
// status; the status must be documented.
func (v *openAPIValidator) validate(method, path string, status int, body []byte) {
	t := v.t
	t.Helper()
	op := v.doc["paths"].(map[string]any)[path].(map[string]any)[strings.ToLower(method)].(map[string]any)
	resp, ok := op["responses"].(map[string]any)[strconv.Itoa(status)].(map[string]any)
	require.True(t, ok, "%s %s: status %d undocumented", method, path, status)
	loc := openAPIURL + "#/paths/" + jsonPointer(path) + "/" + strings.ToLower(method) + "/responses/" + strconv.Itoa(status) + "/content/application~1json/schema"
	if r, ok := resp["$ref"].(string); ok {
		name := strings.TrimPrefix(r, "#/components/responses/")
		loc = openAPIURL + "#/components/responses/" + name + "/content/application~1json/schema"
	}
	sch, ok := v.cache[loc]
	if !ok {
		var err error
		sch, err = v.compiler.Compile(loc)
		require.NoError(t, err, "compiling %s", loc)
		v.cache[loc] = sch
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	require.NoError(t, err)
	require.NoError(t, sch.Validate(inst), "%s %s (%d) does not conform:\n%s", method, path, status, body)
}

// TestRESTResponsesConformToOpenAPI sends every request of the contract
// table and validates each live response (successes and errors) against
// the schema /openapi.json documents for its route and status.
func TestRESTResponsesConformToOpenAPI(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	v := newOpenAPIValidator(t, fetchOpenAPI(t, s))
	routes := 0
	for routePath, cases := range restContractCases() {
		routes++
		for _, tc := range cases {
			r := s.get(t, tc.path)
			require.Equal(t, tc.status, r.Status, "GET %s: %s", tc.path, r.Body)
			v.validate("GET", routePath, r.Status, r.Body)
		}
	}
	require.Equal(t, len(rest.Routes()), routes)

	// The account routes in the table: usage and the webhook list.
	r := s.get(t, "/v1/usage")
	require.Equal(t, 200, r.Status, "%s", r.Body)
	v.validate("GET", "/v1/usage", 200, r.Body)

	// A schema that cannot fail proves nothing: a body missing a legacy
	// field must be rejected.
	bad := s.get(t, "/v1/latest").JSON(t)
	ev := bad["data"].([]any)[0].(map[string]any)
	delete(ev, "globalSummary")
	b, err := json.Marshal(bad)
	require.NoError(t, err)
	loc := openAPIURL + "#/paths/~1v1~1latest/get/responses/200/content/application~1json/schema"
	sch, err := v.compiler.Compile(loc)
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	require.Error(t, sch.Validate(inst))
}
