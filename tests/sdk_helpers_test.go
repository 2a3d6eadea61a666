package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/access/eip3009"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/demo"
)

// The client libraries' own tests (sdk/go: go test, sdk/python: pytest)
// run against a live server started here: its database seeded by the demo
// seeder (sdkDemo, what `seed --demo` and so `make run` serve, with fewer
// events), demo mode (webhooks may target http:// receivers on loopback),
// an admin token (the stream tests ingest events while they listen) and
// x402 payments settled by x402's own facilitator on the local chain the
// payment tests use. The libraries' tests read where everything is from
// the environment (sdkEnv) and find the ids and names they call with in
// the demo data at run time.
//
// A control server beside it does what a test cannot do through the API:
// move the service's clock to just before the end of a rate window (so a
// 429's Retry-After is short enough to wait for) and sign EIP-3009
// authorizations with the payer's key (the signer a payer plugs in, as a
// wallet would).

// sdkRoot is the libraries' folder, from tests/.
var sdkRoot = filepath.Join("..", "sdk")

// sdkDemo is how the libraries' servers are seeded: the demo world of
// `seed --demo` with 3,000 events (enough for every route, quick to load).
var sdkDemo = demo.Options{Events: 3000}

// sdkHTTP is the client the harness itself calls the server with.
var sdkHTTP = &http.Client{Timeout: 30 * time.Second}

type sdkServer struct {
	store   *db.DB
	base    string
	control string
	env     map[string]string
	offset  atomic.Int64
}

// startSDKServer starts the service for the libraries' tests; with pay it
// also starts the facilitator and its chain (tests/interop/payments).
func startSDKServer(t *testing.T, pay bool) *sdkServer {
	t.Helper()
	s := &sdkServer{env: map[string]string{}}
	var fac sdkFacilitatorInfo
	cfg := app.Config{
		DatabaseURL:       dbtest.NewURL(t),
		DBMaxConns:        8,
		Logger:            testLogger(t),
		ShutdownTimeout:   15 * time.Second,
		Demo:              true,
		WebhookAllowCIDRs: "127.0.0.0/8,::1/128",
		CursorSecret:      "sdk-test-cursor-secret-0123456789abcdef",
		ExportURLSecret:   "sdk-test-export-secret-0123456789abcdef",
		AdminToken:        "sdk-test-admin-token",
		ExportDir:         t.TempDir(),
	}
	if pay {
		fac = startSDKFacilitator(t)
		cfg.X402FacilitatorURL = fac.URL
		cfg.MPPSecret = "sdk-test-mpp-secret"
		cfg.PaymentPayTo = fac.PayTo
		cfg.PaymentNetwork = "base-sepolia"
		cfg.PaymentAsset = fac.Token
		cfg.PaymentAssetName = fac.TokenName
		cfg.PaymentAssetVersion = fac.TokenVersion
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg)
	require.NoError(t, err)
	a.DB.Now = func() time.Time { return time.Now().Add(time.Duration(s.offset.Load())) }
	res, err := demo.Seed(ctx, a.DB, sdkDemo)
	require.NoError(t, err)
	require.False(t, res.Skipped)
	s.base = serveApp(t, ctx, cancel, a)

	// The control server.
	mux := http.NewServeMux()
	mux.HandleFunc("POST /clock/window-end", func(w http.ResponseWriter, r *http.Request) {
		in, err := strconv.Atoi(r.URL.Query().Get("in"))
		if err != nil || in < 1 || in > 50 {
			http.Error(w, "in: 1 to 50 seconds", http.StatusBadRequest)
			return
		}
		cur := a.DB.Now()
		target := cur.UTC().Truncate(time.Minute).Add(time.Minute - time.Duration(in)*time.Second)
		if target.After(cur) {
			s.offset.Add(int64(target.Sub(cur)))
		}
		fmt.Fprintf(w, `{"now":%q}`, a.DB.Now().UTC().Format(time.RFC3339Nano))
	})
	mux.HandleFunc("POST /sign", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Domain struct {
				Name, Version     string
				ChainID           int64  `json:"chainId"`
				VerifyingContract string `json:"verifyingContract"`
			} `json:"domain"`
			Authorization eip3009.Authorization `json:"authorization"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sig, err := func() (string, error) {
			parsed, err := in.Authorization.Parse()
			if err != nil {
				return "", err
			}
			key, err := eip3009.Key(fac.PayerKey)
			if err != nil {
				return "", err
			}
			contract, err := eip3009.ParseAddress(in.Domain.VerifyingContract)
			if err != nil {
				return "", err
			}
			return parsed.Sign(eip3009.Domain{Name: in.Domain.Name, Version: in.Domain.Version, ChainID: in.Domain.ChainID, Contract: contract}, key)
		}()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"signature": sig}) //nolint:errcheck
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck
	t.Cleanup(func() { srv.Close() })
	s.control = "http://" + ln.Addr().String()

	s.env["CRYPTOINTEL_BASE_URL"] = s.base
	s.env["CRYPTOINTEL_CONTROL_URL"] = s.control
	s.env["CRYPTOINTEL_ADMIN_TOKEN"] = cfg.AdminToken
	s.store = a.DB
	for k, v := range s.keys(t) {
		s.env[k] = v
	}
	if pay {
		s.env["CRYPTOINTEL_PAYER"] = fac.Payer
	}
	return s
}

// keys creates a key of each plan, as CRYPTOINTEL_KEY_<PLAN> variables,
// and CRYPTOINTEL_KEY_BURN, a key of its own for the 429 test (it spends
// its whole window): each library's run gets its own, so that neither
// spends the other's rate window.
func (s *sdkServer) keys(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, plan := range []string{"free", "pro", "enterprise"} {
		key, _ := accesstest.NewKey(t, s.store, plan)
		out["CRYPTOINTEL_KEY_"+upper(plan)] = key
	}
	out["CRYPTOINTEL_KEY_BURN"], _ = accesstest.NewKey(t, s.store, "enterprise")
	return out
}

// keyEnv is keys as KEY=value entries.
func (s *sdkServer) keyEnv(t *testing.T) []string {
	var env []string
	for k, v := range s.keys(t) {
		env = append(env, k+"="+v)
	}
	return env
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

// environ is the process environment plus the server's.
func (s *sdkServer) environ(extra ...string) []string {
	env := os.Environ()
	for k, v := range s.env {
		env = append(env, k+"="+v)
	}
	return append(env, extra...)
}

// run runs name args in dir with the server's environment; it fails the
// test with the output when the command fails.
func (s *sdkServer) run(t *testing.T, dir string, extraEnv []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 10 * time.Second
	cmd.Dir = dir
	cmd.Env = s.environ(extraEnv...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v in %s:\n%s", name, args, dir, out)
	return string(out)
}

// paymentsInstalled reports whether make interop-payments has run.
func paymentsInstalled() bool {
	_, err := os.Stat(filepath.Join(paymentsDir, "node_modules", "@x402", "core"))
	return err == nil
}

// demoEntity is the owner of the newest event of the demo data, and its
// canonical name, as the API answers them: what the packaging checks call
// with.
func (s *sdkServer) demoEntity(t *testing.T) (int, string) {
	return sdkDemoEntity(t, s.base, s.store)
}

// sdkDemoEntity is demoEntity of the server at base on store.
func sdkDemoEntity(t *testing.T, base string, store *db.DB) (int, string) {
	t.Helper()
	key, _ := accesstest.NewKey(t, store, "enterprise")
	get := func(path string, out any) {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := sdkHTTP.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
		require.NoError(t, json.Unmarshal(body, out), "%s", body)
	}
	var latest struct {
		Data []struct {
			Owners []struct {
				ID int `json:"id"`
			} `json:"owners"`
		} `json:"data"`
	}
	get("/v1/latest?limit=1&legacy=false", &latest)
	require.NotEmpty(t, latest.Data, "the demo data has events")
	require.NotEmpty(t, latest.Data[0].Owners, "the newest event has an owner")
	id := latest.Data[0].Owners[0].ID
	var entity struct {
		Data struct {
			CanonicalName string `json:"canonicalName"`
		} `json:"data"`
	}
	get("/v1/entities/byId?id="+strconv.Itoa(id), &entity)
	require.NotEmpty(t, entity.Data.CanonicalName)
	return id, entity.Data.CanonicalName
}
