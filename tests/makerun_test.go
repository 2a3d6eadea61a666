package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestMakeRun runs the README's first command, `make run`, against a fresh
// database: it must migrate, seed the demo data, print one labelled key per
// plan and serve, and the printed enterprise key must return demo data for
// the README's 3-hop query (entity → relationships → relatedEntity →
// events → owners). Bringing up a stopped cluster is scripts/pg-up.sh's
// part, exercised by every `make test`.
func TestMakeRun(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is required: %v", err)
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "run",
		"ADDR="+addr, "BIN="+filepath.Join(t.TempDir(), "cryptointel"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbtest.NewURL(t))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) //nolint:errcheck
		cmd.Wait()                                      //nolint:errcheck
	})

	// Read the printed keys: "  <plan>  ci_…" lines after the banner.
	keys := map[string]string{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && len(keys) < 4 {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && strings.HasPrefix(f[1], "ci_") {
			keys[f[0]] = f[1]
		}
	}
	go io.Copy(io.Discard, stdout) //nolint:errcheck
	require.Len(t, keys, 4, "make run printed no key per plan; stderr:\n%s", stderr.String())
	for _, plan := range []string{"free", "pro", "business", "enterprise"} {
		require.Contains(t, keys, plan)
	}

	base := "http://" + addr
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 2*time.Minute, 100*time.Millisecond, "server did not come up; stderr:\n%s", stderr.String())

	query := `{ entity(id: 101) { canonicalName relationships(first: 3) { relationshipType relatedEntity { displayName events(first: 2) { nodes { title owners { id displayName } } } } } } }`
	body, err := json.Marshal(map[string]string{"query": query})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keys["enterprise"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	var out struct {
		Data struct {
			Entity struct {
				CanonicalName string `json:"canonicalName"`
				Relationships []struct {
					RelatedEntity struct {
						DisplayName string `json:"displayName"`
						Events      struct {
							Nodes []struct {
								Title  string `json:"title"`
								Owners []struct {
									ID int `json:"id"`
								} `json:"owners"`
							} `json:"nodes"`
						} `json:"events"`
					} `json:"relatedEntity"`
				} `json:"relationships"`
			} `json:"entity"`
		} `json:"data"`
		Errors []any `json:"errors"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Empty(t, out.Errors)
	require.Equal(t, "Ethereum", out.Data.Entity.CanonicalName)
	require.Len(t, out.Data.Entity.Relationships, 3)
	owners := 0
	for _, rel := range out.Data.Entity.Relationships {
		require.NotEmpty(t, rel.RelatedEntity.DisplayName)
		for _, ev := range rel.RelatedEntity.Events.Nodes {
			require.NotEmpty(t, ev.Title)
			owners += len(ev.Owners)
		}
	}
	require.Positive(t, owners, "the 3-hop query returned no events with owners")
	t.Logf("make run served on %s; 3-hop query returned %s owners across %d relationships",
		addr, strconv.Itoa(owners), len(out.Data.Entity.Relationships))
}
