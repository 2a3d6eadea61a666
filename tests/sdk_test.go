package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// python is Debian's interpreter: httpx, pandas, pytest and hatchling are
// Debian's packages (make sdk-python-deps installs them), importable there
// only.
const python = "/usr/bin/python3"

// TestSDKClients runs the Go and Python client libraries' own tests
// against one live server seeded by the demo seeder (startSDKServer):
// every route once, a three-page cursor walk, a 429 retried after its
// Retry-After, typed 400/401/403/404/413 errors, a stream and a GraphQL
// subscription resumed after their connection is cut, a webhook verified
// and a tampered one refused, a request paid through the 402 hook on the
// local chain, GraphQL, and (Python) a DataFrame indexed by time. Beside
// them: the committed OpenAPI document is the server's, regenerating either
// library gives no diff, the Go client builds from a scratch module with a
// replace, and the Python wheel installs into a fresh virtualenv and makes
// a call.
func TestSDKClients(t *testing.T) {
	t.Parallel()
	if !paymentsInstalled() {
		t.Fatalf("%s/node_modules is missing: run `make interop-payments` (make test does)", paymentsDir)
	}
	s := startSDKServer(t, true)
	if hold := os.Getenv("SDK_HOLD"); hold != "" {
		// For working on a library: the server's environment is written to
		// the file SDK_HOLD names (sourceable by a shell), and the server
		// runs until that file is removed (at most 30 minutes).
		var b strings.Builder
		for k, v := range s.env {
			fmt.Fprintf(&b, "export %s=%q\n", k, v)
		}
		require.NoError(t, os.WriteFile(hold, []byte(b.String()), 0o644))
		for end := time.Now().Add(30 * time.Minute); time.Now().Before(end); time.Sleep(time.Second) {
			if _, err := os.Stat(hold); err != nil {
				break
			}
		}
		t.SkipNow()
	}

	t.Run("OpenAPIDocument", func(t *testing.T) {
		resp, err := sdkHTTP.Get(s.base + "/openapi.json")
		require.NoError(t, err)
		live, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		committed, err := os.ReadFile(filepath.Join(sdkRoot, "openapi.json"))
		require.NoError(t, err)
		require.True(t, bytes.Equal(live, committed),
			"sdk/openapi.json is not the server's /openapi.json: run `go generate ./...` (tools/openapidoc writes it, tools/pysdkgen the Python models), then `(cd sdk/go && go generate ./...)`, and commit")
	})

	t.Run("Go", func(t *testing.T) {
		// -timeout: a test waiting for what never comes fails in minutes,
		// with the goroutines' stacks, instead of holding the suite.
		out := s.run(t, filepath.Join(sdkRoot, "go"), s.keyEnv(t), "go", "test", "-count=1", "-v", "-timeout", "4m", "./...")
		for _, name := range []string{"TestEveryRoute", "TestCursorWalk", "TestTypedErrors", "TestRetryAfter",
			"TestStreamResume", "TestSubscriptionResume", "TestWebhookVerify", "TestPaidRequest", "TestGraphQLQuery"} {
			require.Contains(t, out, "--- PASS: "+name+" ")
		}
		require.NotContains(t, out, "--- SKIP")
		summary(t, "sdk/go: %d tests passed against the live server", strings.Count(out, "--- PASS"))
	})

	t.Run("GoRegenerates", func(t *testing.T) {
		// A copy of the module beside copies of the document and the
		// schema: go generate there must rewrite the generated files byte
		// for byte.
		dir := t.TempDir()
		sdkCopyTree(t, filepath.Join(sdkRoot, "go"), filepath.Join(dir, "sdk", "go"))
		sdkCopyFile(t, filepath.Join(sdkRoot, "openapi.json"), filepath.Join(dir, "sdk", "openapi.json"))
		sdkCopyFile(t, filepath.Join("..", "schema.graphqls"), filepath.Join(dir, "schema.graphqls"))
		generated := []string{"api.gen.go", "routes.gen.go", "genqlient.gen.go"}
		for _, f := range generated {
			require.NoError(t, os.Remove(filepath.Join(dir, "sdk", "go", f)))
		}
		s.run(t, filepath.Join(dir, "sdk", "go"), nil, "go", "generate", "./...")
		for _, f := range generated {
			want, err := os.ReadFile(filepath.Join(sdkRoot, "go", f))
			require.NoError(t, err)
			got, err := os.ReadFile(filepath.Join(dir, "sdk", "go", f))
			require.NoError(t, err)
			require.True(t, bytes.Equal(want, got), "sdk/go/%s differs from what go generate writes: run go generate in sdk/go and commit", f)
		}
	})

	entity, name := s.demoEntity(t)
	t.Run("GoImport", func(t *testing.T) {
		// A scratch module that requires the client through a replace.
		dir := t.TempDir()
		abs, err := filepath.Abs(filepath.Join(sdkRoot, "go"))
		require.NoError(t, err)
		goMod := "module scratch\n\ngo 1.26\n\nrequire github.com/cryptointel/cryptointel/sdk/go v1.0.0\n\nreplace github.com/cryptointel/cryptointel/sdk/go => " + abs + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644))
		sdkCopyFile(t, filepath.Join(sdkRoot, "go", "go.sum"), filepath.Join(dir, "go.sum"))
		main := `package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	cryptointel "github.com/cryptointel/cryptointel/sdk/go"
)

func main() {
	c, err := cryptointel.New(os.Getenv("CRYPTOINTEL_BASE_URL"), cryptointel.WithAPIKey(os.Getenv("CRYPTOINTEL_KEY_ENTERPRISE")))
	if err != nil {
		panic(err)
	}
	id, err := strconv.Atoi(os.Getenv("ENTITY_ID"))
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := c.GetV1EntitiesByIdWithResponse(ctx, &cryptointel.GetV1EntitiesByIdParams{Id: id})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.JSON200.Data.CanonicalName, c.LastMeta().PlanTier)
}
`
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644))
		out := s.run(t, dir, []string{"GOFLAGS=-mod=mod", "ENTITY_ID=" + strconv.Itoa(entity)}, "go", "run", ".")
		require.Equal(t, name+" enterprise\n", out)
	})

	t.Run("Python", func(t *testing.T) {
		out := s.run(t, filepath.Join(sdkRoot, "python"), append(s.keyEnv(t), "PYTHONPATH=src", "PYTHONDONTWRITEBYTECODE=1"),
			python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
		require.Contains(t, out, " passed")
		require.NotContains(t, out, "skipped")
		summary(t, "sdk/python: %s", lastLine(out))
	})

	t.Run("PythonRegenerates", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "_generated.py")
		s.run(t, filepath.Join("..", "tools", "pysdkgen"), nil, "go", "run", ".", "../../sdk/openapi.json", out)
		want, err := os.ReadFile(filepath.Join(sdkRoot, "python", "src", "cryptointel", "_generated.py"))
		require.NoError(t, err)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, got), "sdk/python/src/cryptointel/_generated.py differs from what tools/pysdkgen writes: run go generate ./tools/pysdkgen and commit")
	})

	t.Run("PythonWheel", func(t *testing.T) {
		dir := t.TempDir()
		// Build from a copy, so the checkout gets no build artifacts.
		src := filepath.Join(dir, "src")
		sdkCopyTree(t, filepath.Join(sdkRoot, "python"), src)
		s.run(t, src, nil, "hatchling", "build", "-t", "wheel", "-d", filepath.Join(dir, "dist"))
		wheels, err := filepath.Glob(filepath.Join(dir, "dist", "cryptointel-1.0.*-py3-none-any.whl"))
		require.NoError(t, err)
		require.Len(t, wheels, 1)
		venv := filepath.Join(dir, "venv")
		s.run(t, dir, nil, python, "-m", "venv", "--system-site-packages", venv)
		s.run(t, dir, nil, filepath.Join(venv, "bin", "pip"), "install", "--no-index", "--no-deps", "--no-cache-dir", "-q", wheels[0])
		call := `import os, cryptointel
assert cryptointel.__file__.startswith(os.environ["VENV"]), cryptointel.__file__
c = cryptointel.Client(os.environ["CRYPTOINTEL_KEY_ENTERPRISE"], base_url=os.environ["CRYPTOINTEL_BASE_URL"], timeout=30)
print(c.get_entities_by_id(id=int(os.environ["ENTITY_ID"]))["data"]["canonicalName"], cryptointel.__version__)
`
		out := s.run(t, dir, []string{"VENV=" + venv, "ENTITY_ID=" + strconv.Itoa(entity)}, filepath.Join(venv, "bin", "python"), "-c", call)
		require.Equal(t, name+" 1.0.0\n", out)
	})
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Trim(lines[len(lines)-1], "= ")
}

func sdkCopyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
	require.NoError(t, os.WriteFile(to, b, 0o644))
}

// copyTree copies the files of from into to, leaving out caches and build
// output.
func sdkCopyTree(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && (name == "__pycache__" || name == "dist" || name == ".pytest_cache" || strings.HasSuffix(name, ".egg-info")) {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		sdkCopyFile(t, path, filepath.Join(to, rel))
		return nil
	}))
}

// TestSDKDependencies: no library depends on more than its generators'
// runtimes, httpx and pandas (Python, pandas optional) and the x402 client
// (TypeScript). A new dependency is a decision: add it here with why.
func TestSDKDependencies(t *testing.T) {
	t.Parallel()
	t.Run("Go", func(t *testing.T) {
		// Direct requirements: oapi-codegen's runtime and genqlient's.
		goMod, err := os.ReadFile(filepath.Join(sdkRoot, "go", "go.mod"))
		require.NoError(t, err)
		var direct []string
		for _, line := range strings.Split(string(goMod), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && strings.Contains(f[0], ".") && !strings.Contains(line, "// indirect") {
				direct = append(direct, f[0])
			} else if len(f) >= 3 && f[0] == "require" && f[2] != "(" && !strings.Contains(line, "// indirect") {
				direct = append(direct, f[1])
			}
		}
		require.ElementsMatch(t, []string{"github.com/oapi-codegen/runtime", "github.com/Khan/genqlient"}, direct)
	})
	t.Run("Python", func(t *testing.T) {
		pyproject, err := os.ReadFile(filepath.Join(sdkRoot, "python", "pyproject.toml"))
		require.NoError(t, err)
		deps := map[string]string{}
		section := ""
		for _, line := range strings.Split(string(pyproject), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "[") {
				section = line
				continue
			}
			name, value, ok := strings.Cut(line, "=")
			if !ok {
				continue
			}
			name = strings.TrimSpace(name)
			if (section == "[project]" && name == "dependencies") || section == "[project.optional-dependencies]" {
				deps[section+" "+name] = strings.TrimSpace(value)
			}
		}
		require.Equal(t, map[string]string{
			"[project] dependencies":                 `["httpx>=0.23"]`,
			"[project.optional-dependencies] pandas": `["pandas>=1.5"]`,
		}, deps)
	})
	t.Run("TypeScript", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(sdkRoot, "typescript", "package.json"))
		require.NoError(t, err)
		var pkg struct {
			Dependencies         map[string]string `json:"dependencies"`
			PeerDependencies     map[string]string `json:"peerDependencies"`
			OptionalDependencies map[string]string `json:"optionalDependencies"`
		}
		require.NoError(t, json.Unmarshal(b, &pkg))
		names := func(m map[string]string) []string {
			var out []string
			for k := range m {
				out = append(out, k)
			}
			return out
		}
		// openapi-fetch: openapi-typescript's runtime; the typed-document
		// node: GraphQL Code Generator's documents' type; @x402/fetch.
		require.ElementsMatch(t, []string{"openapi-fetch", "@graphql-typed-document-node/core", "@x402/fetch"}, names(pkg.Dependencies))
		require.Empty(t, pkg.PeerDependencies)
		require.Empty(t, pkg.OptionalDependencies)
	})
}

// TestSDKDocs: docs/ has a page per client library, and the README's
// "Where to go next" links each.
func TestSDKDocs(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	_, next, ok := strings.Cut(string(readme), "\n## Where to go next\n")
	require.True(t, ok, "README.md has no \"Where to go next\" section")
	next, _, _ = strings.Cut(next, "\n## ")
	for _, lib := range []string{"typescript", "python", "go"} {
		page := "docs/sdk/" + lib + ".md"
		_, err := os.Stat(filepath.Join("..", page))
		require.NoError(t, err, "the %s library's page", lib)
		require.Contains(t, next, "]("+page+")", "README's Where to go next links %s", page)
	}
}
