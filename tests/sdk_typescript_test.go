package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/demo"
)

// tsClientDir is the TypeScript client library (make sdk-typescript
// installs its pinned npm packages).
var tsClientDir = filepath.Join("..", "sdk", "typescript")

// tsClientAdminToken guards the SDK server's /admin/ingest, which its stream
// tests ingest through.
const tsClientAdminToken = "sdk-admin-token-0123456789abcdef"

// requireTSClientDeps fails unless make test installed the library's
// pinned packages from its lock file.
func requireTSClientDeps(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node not found: the TypeScript client's tests run with node --test")
	}
	for _, pkg := range []string{"openapi-fetch", "@x402/fetch", "typescript", "openapi-typescript", "@graphql-codegen/cli"} {
		if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("%s is not installed in sdk/typescript: run make test (or make sdk-typescript)", pkg)
		}
	}
}

// tsClientServer is the demo-seeded server the client's tests call, taking
// x402 payments on the payment interop's local chain.
type tsClientServer struct {
	base string
	app  *app.App
	env  []string
}

func startTSClientServer(t *testing.T) *tsClientServer {
	t.Helper()
	pay := startSDKFacilitator(t)
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Config{
		DatabaseURL:         dbtest.NewURL(t),
		Logger:              testLogger(t),
		Demo:                true,
		AdminToken:          tsClientAdminToken,
		CursorSecret:        "sdk-cursor-secret-0123456789abcdef012345",
		ShutdownTimeout:     15 * time.Second,
		WebhookAllowCIDRs:   "127.0.0.0/8,::1/128",
		X402FacilitatorURL:  pay.URL,
		PaymentPayTo:        pay.PayTo,
		PaymentNetwork:      "base-sepolia",
		PaymentAsset:        pay.Token,
		PaymentAssetName:    pay.TokenName,
		PaymentAssetVersion: pay.TokenVersion,
	})
	require.NoError(t, err)
	res, err := demo.Seed(ctx, a.DB, sdkDemo)
	require.NoError(t, err)
	require.False(t, res.Skipped)
	s := &tsClientServer{base: serveApp(t, ctx, cancel, a), app: a}
	payments, err := filepath.Abs(paymentsDir)
	require.NoError(t, err)
	s.env = []string{"BASE_URL=" + s.base, "ADMIN_TOKEN=" + tsClientAdminToken, "PAYMENTS_DIR=" + payments,
		"PAYER_KEY=" + pay.PayerKey, "CHAIN_ID=" + strconv.FormatInt(pay.ChainID, 10), "PAYMENT_TOKEN=" + pay.Token}
	// Keys of their own for each test file, so none meets another's rate
	// window; KEY_RETRY is the one the retry test fills.
	for _, k := range []struct{ name, plan string }{
		{"KEY", cryptointel.PlanEnterprise}, {"KEY_PAGES", cryptointel.PlanEnterprise}, {"KEY_RETRY", cryptointel.PlanEnterprise},
		{"KEY_STREAM", cryptointel.PlanEnterprise}, {"KEY_WEBHOOK", cryptointel.PlanEnterprise}, {"KEY_ERRORS", cryptointel.PlanEnterprise},
		{"FREE_KEY", cryptointel.PlanFree},
	} {
		key, _ := accesstest.NewKey(t, a.DB, k.plan)
		s.env = append(s.env, k.name+"="+key)
	}
	return s
}

// sdkFacilitatorInfo is what tests/interop/payments/facilitator.mjs reports.
type sdkFacilitatorInfo struct {
	URL          string `json:"url"`
	ChainID      int64  `json:"chainId"`
	Token        string `json:"token"`
	TokenName    string `json:"tokenName"`
	TokenVersion string `json:"tokenVersion"`
	Payer        string `json:"payer"`
	PayerKey     string `json:"payerKey"`
	PayTo        string `json:"payTo"`
}

// startSDKFacilitator starts the payment interop's facilitator and
// local chain (tests/interop/payments), as the payment tests do.
func startSDKFacilitator(t *testing.T) sdkFacilitatorInfo {
	t.Helper()
	if _, err := os.Stat(filepath.Join(paymentsDir, "node_modules", "@x402", "evm")); err != nil {
		t.Fatalf("%s/node_modules is missing: run `make interop-payments` (make test does)", paymentsDir)
	}
	_, out, stderr := startNode(t, "facilitator.mjs")
	var info sdkFacilitatorInfo
	ready := make(chan error, 1)
	go func() {
		line, err := out.ReadString('\n')
		if err == nil {
			err = json.Unmarshal([]byte(line), &info)
		}
		ready <- err
		io.Copy(io.Discard, out) //nolint:errcheck
	}()
	select {
	case err := <-ready:
		require.NoError(t, err, "facilitator: %s", stderr.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("the facilitator did not start in 90s: %s", stderr.String())
	}
	return info
}

// tsCommand is name args bounded in time: a test waiting for what never
// comes fails in minutes instead of holding the suite.
func tsCommand(t *testing.T, name string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// tsNpmRun runs an npm script of sdk/typescript with env, failing the test
// with its output when it fails.
func tsNpmRun(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := tsCommand(t, "npm", args...)
	cmd.Dir = tsClientDir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	require.NoError(t, err, "npm %s:\n%s", strings.Join(args, " "), lastBytes(out.String(), 32<<10))
	return out.String()
}

// TestSDKTypeScript builds the TypeScript client (sdk/typescript) and runs
// its own tests (node --test) against a live demo-seeded server: every
// /v1 route once, a cursor walk, a 429 retried after Retry-After, typed
// errors, a stream and a subscription resumed after their connection is
// cut, a webhook delivery verified (and a tampered one refused) and a
// request paid through the 402 hook. Its generated files must be what the
// generators make of the committed inputs, and the committed OpenAPI
// document what the server serves.
func TestSDKTypeScript(t *testing.T) {
	t.Parallel()
	requireTSClientDeps(t)
	s := startTSClientServer(t)

	t.Run("openapi document", func(t *testing.T) {
		resp, err := sdkHTTP.Get(s.base + "/openapi.json")
		require.NoError(t, err)
		defer resp.Body.Close()
		served, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		committed, err := os.ReadFile(filepath.Join("..", "sdk", "openapi.json"))
		require.NoError(t, err)
		require.Equal(t, string(served), string(committed),
			"sdk/openapi.json is not what /openapi.json serves: run go generate ./tools/openapidoc, then npm run generate in sdk/typescript")
	})
	t.Run("regeneration gives no diff", func(t *testing.T) {
		tsNpmRun(t, nil, "run", "--silent", "generate:check")
	})
	t.Run("node --test", func(t *testing.T) {
		out := tsNpmRun(t, s.env, "test")
		t.Logf("%s", lastBytes(out, 8<<10))
		summary(t, "sdk/typescript: %s", tsNodeTestCounts(out))
	})
	entity, name := sdkDemoEntity(t, s.base, s.app.DB)
	t.Run("npm pack installs into a fresh directory and makes a call", func(t *testing.T) {
		packDir, appDir := t.TempDir(), t.TempDir()
		tsNpmRun(t, nil, "pack", "--silent", "--pack-destination", packDir)
		tarballs, err := filepath.Glob(filepath.Join(packDir, "*.tgz"))
		require.NoError(t, err)
		require.Len(t, tarballs, 1)
		require.NoError(t, os.WriteFile(filepath.Join(appDir, "package.json"), []byte(`{"name":"scratch","private":true,"type":"module"}`), 0o644))
		install := tsCommand(t, "npm", "install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", tarballs[0])
		install.Dir = appDir
		out, err := install.CombinedOutput()
		require.NoError(t, err, "%s", out)
		script := `import { Client } from "@cryptointel/client";
const c = new Client({ baseUrl: process.env.BASE_URL, apiKey: process.env.KEY });
const r = await c.entityById({ id: Number(process.env.ENTITY_ID) });
console.log(JSON.stringify({ name: r.data.canonicalName, remaining: c.rate.remaining }));`
		require.NoError(t, os.WriteFile(filepath.Join(appDir, "call.mjs"), []byte(script), 0o644))
		call := tsCommand(t, "node", "call.mjs")
		call.Dir = appDir
		call.Env = append(append(os.Environ(), s.env...), "ENTITY_ID="+strconv.Itoa(entity))
		out, err = call.CombinedOutput()
		require.NoError(t, err, "%s", out)
		var got struct {
			Name      string `json:"name"`
			Remaining int    `json:"remaining"`
		}
		require.NoError(t, json.Unmarshal(bytes.TrimSpace(out), &got), "%s", out)
		require.Equal(t, name, got.Name)
		require.Positive(t, got.Remaining)
	})
}

// tsNodeTestCounts is the "tests N, pass N, fail N" summary of node --test (TAP).
func tsNodeTestCounts(out string) string {
	var parts []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		for _, p := range []string{"# tests ", "# pass ", "# fail "} {
			if strings.HasPrefix(line, p) {
				parts = append(parts, strings.TrimPrefix(line, "# "))
			}
		}
	}
	return strings.Join(parts, ", ")
}
