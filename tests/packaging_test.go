package tests

import (
	"archive/tar"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// The packaging under deploy/: what can be checked on a machine without a
// container runtime. make test installs podman and systemd-analyze
// (packaging-tools) first; a part whose tool is missing says so and is
// skipped.
const (
	containerfile = "../deploy/Containerfile"
	composeFile   = "../deploy/compose.yaml"
	unitFile      = "../deploy/cryptointel.service"
	// imageBinary is where the Containerfile, the unit and the compose
	// health check expect the binary.
	imageBinary = "/usr/local/bin/cryptointel"
	// imageUser is the Containerfile's non-root user.
	imageUser = "65532:65532"
)

// TestPackaging builds the image's static binary and checks it: no dynamic
// loader, migrations embedded (it migrates a fresh database from an empty
// directory), and the healthcheck command a FROM scratch image relies on.
// Then the image builds offline with podman and holds what the
// Containerfile promises; the systemd unit passes systemd-analyze verify;
// the compose file parses and names only real settings.
func TestPackaging(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "cryptointel")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "../cmd/cryptointel")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	t.Run("static binary", func(t *testing.T) {
		f, err := elf.Open(bin)
		require.NoError(t, err)
		defer f.Close()
		for _, p := range f.Progs {
			require.NotEqual(t, elf.PT_INTERP, p.Type, "the binary asks for a dynamic loader; a FROM scratch image has none")
		}
		// Migrations are embedded: they run from a directory holding
		// nothing but the binary.
		cmd := exec.Command(bin, "migrate")
		cmd.Dir = t.TempDir()
		cmd.Env = []string{"DATABASE_URL=" + dbtest.NewURL(t)}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		require.Contains(t, string(out), "migrations applied")
	})

	t.Run("healthcheck command", func(t *testing.T) {
		s := startRESTServerWith(t, func(*db.DB) {})
		addr := strings.TrimPrefix(s.base, "http://")
		cmd := exec.Command(bin, "healthcheck")
		cmd.Env = []string{"ADDR=" + addr}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		require.Contains(t, string(out), `healthy: {"status":"ready"}`)

		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		closed := ln.Addr().String()
		ln.Close()
		cmd = exec.Command(bin, "healthcheck", "--timeout", "2s")
		cmd.Env = []string{"ADDR=" + closed}
		out, err = cmd.CombinedOutput()
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "a refused probe must fail: %v %s", err, out)
		require.Contains(t, string(out), "unhealthy: ")
	})

	t.Run("image builds offline", func(t *testing.T) {
		if _, err := exec.LookPath("podman"); err != nil {
			t.Skip("podman is not installed (make test installs it: make packaging-tools); the image build is not checked")
		}
		tag := fmt.Sprintf("cryptointel-packaging-test-%d", time.Now().UnixNano())
		ctxDir := filepath.Join(t.TempDir(), "image")
		cmd := exec.Command("make", "-C", "..", "image", "IMAGE="+tag, "IMAGE_CONTEXT="+ctxDir, "IMAGE_ENGINE=podman", "VERSION=test")
		out, err := cmd.CombinedOutput()
		t.Cleanup(func() { exec.Command("podman", "rmi", "-f", tag+":test", tag+":latest").Run() }) //nolint:errcheck
		require.NoError(t, err, string(out))

		raw, err := exec.Command("podman", "image", "inspect", tag+":latest").Output()
		require.NoError(t, err)
		var inspect []struct {
			Config struct {
				User       string
				Entrypoint []string
				Cmd        []string
				Env        []string
				StopSignal string
			}
			Healthcheck struct {
				Test []string
			}
		}
		require.NoError(t, json.Unmarshal(raw, &inspect))
		require.Len(t, inspect, 1)
		img := inspect[0]
		require.Equal(t, imageUser, img.Config.User, "non-root")
		require.Equal(t, []string{imageBinary}, img.Config.Entrypoint)
		require.Equal(t, []string{"serve"}, img.Config.Cmd)
		require.Equal(t, "SIGTERM", img.Config.StopSignal)
		require.Equal(t, []string{"CMD", imageBinary, "healthcheck"}, img.Healthcheck.Test, "HEALTHCHECK kept (docker format)")
		requireSettings(t, envNames(img.Config.Env), "PATH", "SSL_CERT_FILE")

		files := imageFiles(t, tag+":latest")
		require.Contains(t, files, "usr/local/bin/cryptointel")
		require.NotZero(t, files["usr/local/bin/cryptointel"].Mode&0o111, "executable")
		require.Contains(t, files, "etc/ssl/certs/ca-certificates.crt", "CA bundle")
		require.Contains(t, files, "etc/passwd")
		for _, d := range []string{"tmp/", "var/lib/cryptointel/exports/"} {
			require.Contains(t, files, d)
			require.Equal(t, 65532, files[d].Uid, "%s writable by the non-root user", d)
		}
		summary(t, "packaging: image %s built offline with podman FROM scratch (%d files, user %s, HEALTHCHECK %s)",
			tag, len(files), img.Config.User, strings.Join(img.Healthcheck.Test[1:], " "))
	})

	t.Run("systemd unit verifies", func(t *testing.T) {
		if _, err := exec.LookPath("systemd-analyze"); err != nil {
			t.Skip("systemd-analyze is not installed (make test installs it: make packaging-tools); the unit is not verified")
		}
		// A root holding the system's units, the unit and the binary where
		// ExecStart expects it: verify resolves both inside it.
		root := t.TempDir()
		for _, d := range []string{"usr/local/bin", "etc/systemd/system", "usr/lib/systemd"} {
			require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
		}
		out, err := exec.Command("cp", "-r", "/usr/lib/systemd/system", filepath.Join(root, "usr/lib/systemd/")).CombinedOutput()
		require.NoError(t, err, string(out))
		copyFile(t, bin, filepath.Join(root, imageBinary), 0o755)
		unit := filepath.Join(root, "etc/systemd/system/cryptointel.service")
		copyFile(t, unitFile, unit, 0o644)
		out, err = exec.Command("systemd-analyze", "verify", "--root="+root, unit).CombinedOutput()
		require.NoError(t, err, string(out))
		require.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify warned")

		text := readText(t, unitFile)
		require.Contains(t, text, "\nExecStart="+imageBinary+" serve\n")
		require.Contains(t, text, "\nDynamicUser=yes\n", "not root")
		requireSettings(t, unitEnvNames(text))
		stop := regexp.MustCompile(`\nTimeoutStopSec=(\d+)s\n`).FindStringSubmatch(text)
		require.NotNil(t, stop)
		requireGrace(t, stop[1]+"s", unitEnvValue(text, "SHUTDOWN_TIMEOUT"))
	})

	t.Run("compose file parses", func(t *testing.T) {
		var compose struct {
			Services map[string]struct {
				Image       string            `yaml:"image"`
				Environment map[string]string `yaml:"environment"`
				DependsOn   map[string]struct {
					Condition string `yaml:"condition"`
				} `yaml:"depends_on"`
				Healthcheck struct {
					Test []string `yaml:"test"`
				} `yaml:"healthcheck"`
				StopGracePeriod string   `yaml:"stop_grace_period"`
				Profiles        []string `yaml:"profiles"`
				ReadOnly        bool     `yaml:"read_only"`
				CapDrop         []string `yaml:"cap_drop"`
				SecurityOpt     []string `yaml:"security_opt"`
				Secrets         []string `yaml:"secrets"`
				PullPolicy      string   `yaml:"pull_policy"`
			} `yaml:"services"`
			Volumes map[string]any `yaml:"volumes"`
			Secrets map[string]struct {
				File string `yaml:"file"`
			} `yaml:"secrets"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(readText(t, composeFile)), &compose))
		svc, ok := compose.Services["cryptointel"]
		require.True(t, ok)
		require.Equal(t, "cryptointel:${CRYPTOINTEL_VERSION:?set CRYPTOINTEL_VERSION to the tag make image built (git describe --always --dirty)}", svc.Image,
			"the version tag make image builds, never :latest")
		require.Equal(t, "never", svc.PullPolicy, "the image is built locally")
		require.Equal(t, []string{"CMD", imageBinary, "healthcheck"}, svc.Healthcheck.Test)
		require.Equal(t, "service_healthy", svc.DependsOn["postgres"].Condition)
		var env []string
		for name := range svc.Environment {
			env = append(env, name)
		}
		requireSettings(t, env, "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "PGPASSFILE")
		require.Contains(t, svc.Environment["DATABASE_URL"], "@postgres:5432/")
		// Least privilege: the service's own database role, its password
		// in a secret file; no default password anywhere.
		require.True(t, strings.HasPrefix(svc.Environment["DATABASE_URL"], "postgres://cryptointel_app@"), "no password in the URL, not the superuser")
		require.Equal(t, "/run/secrets/app_pgpass", svc.Environment["PGPASSFILE"])
		require.Contains(t, svc.Secrets, "app_pgpass")
		require.Equal(t, "/run/secrets/postgres_password", compose.Services["postgres"].Environment["POSTGRES_PASSWORD_FILE"])
		require.NotContains(t, compose.Services["postgres"].Environment, "POSTGRES_USER", "the superuser is postgres; the service never uses it")
		for name, sec := range compose.Secrets {
			require.True(t, strings.HasPrefix(sec.File, "./secrets/"), "secret %s is a file the operator creates", name)
		}
		text := readText(t, composeFile)
		require.NotRegexp(t, `(?i)password[^\n]*:-`, text, "no default password")
		require.NotRegexp(t, `SECRET[A-Z_]*:\s*\$\{[A-Z_]+:-[^}]`, text, "no default secret")
		// Hardened containers.
		require.True(t, svc.ReadOnly, "read-only root file system")
		require.Equal(t, []string{"ALL"}, svc.CapDrop)
		require.Contains(t, svc.SecurityOpt, "no-new-privileges:true")
		require.NotEmpty(t, svc.Environment["METRICS_TOKEN"], "/metrics behind a token")
		requireGrace(t, svc.StopGracePeriod, svc.Environment["SHUTDOWN_TIMEOUT"])
		require.Contains(t, compose.Services, "postgres")
		require.Equal(t, []string{"replica"}, compose.Services["replica"].Profiles)
		require.Equal(t, []string{"s3"}, compose.Services["s3"].Profiles)
		for name, s := range compose.Services {
			require.NotEmpty(t, s.Image, name)
			require.NotContains(t, s.Image, ":latest", "%s: pinned images only", name)
			require.Regexp(t, `:[^:/]+$`, s.Image, "%s: a version tag", name)
			require.Equal(t, []string{"ALL"}, s.CapDrop, "%s drops every capability (and adds back only what it needs)", name)
			require.Contains(t, s.SecurityOpt, "no-new-privileges:true", name)
		}
		role := readText(t, "../deploy/postgres-app-role.sh")
		require.Contains(t, role, "NOSUPERUSER NOCREATEDB NOCREATEROLE")
	})
}

// requireSettings fails unless every name is an environment variable of
// app.Config (or one of also), so a misspelt setting cannot hide in the
// packaging.
func requireSettings(t *testing.T, names []string, also ...string) {
	t.Helper()
	known := map[string]bool{}
	for _, s := range app.Settings() {
		known[s.Env] = true
	}
	for _, a := range also {
		known[a] = true
	}
	require.NotEmpty(t, names)
	for _, n := range names {
		require.True(t, known[n], "%s is not a setting of cryptointel serve", n)
	}
}

// requireGrace holds a stop grace period to the deployment rule: at least
// twice SHUTDOWN_TIMEOUT (requests, then jobs) plus a few seconds.
func requireGrace(t *testing.T, grace, shutdown string) {
	t.Helper()
	g, err := time.ParseDuration(grace)
	require.NoError(t, err)
	s, err := time.ParseDuration(shutdown)
	require.NoError(t, err)
	require.GreaterOrEqual(t, g, 2*s+5*time.Second, "grace %s for SHUTDOWN_TIMEOUT %s", grace, shutdown)
}

func envNames(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		out = append(out, name)
	}
	return out
}

// unitEnvNames are the names a unit's Environment= lines set.
func unitEnvNames(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "Environment="); ok {
			out = append(out, envNames(strings.Fields(v))...)
		}
	}
	return out
}

func unitEnvValue(text, name string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "Environment="); ok {
			for _, kv := range strings.Fields(v) {
				if n, val, _ := strings.Cut(kv, "="); n == name {
					return val
				}
			}
		}
	}
	return ""
}

// imageFiles lists the files of image's layers (podman save), by path.
func imageFiles(t *testing.T, image string) map[string]*tar.Header {
	t.Helper()
	archive := filepath.Join(t.TempDir(), "image.tar")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "podman", "save", "--format", "docker-archive", "-o", archive, image).CombinedOutput()
	require.NoError(t, err, string(out))
	entries := map[string][]byte{}
	f, err := os.Open(archive)
	require.NoError(t, err)
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		entries[h.Name] = b
	}
	var manifest []struct{ Layers []string }
	require.NoError(t, json.Unmarshal(entries["manifest.json"], &manifest))
	require.Len(t, manifest, 1)
	files := map[string]*tar.Header{}
	for _, layer := range manifest[0].Layers {
		lr := tar.NewReader(strings.NewReader(string(entries[layer])))
		for {
			h, err := lr.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			files[strings.TrimPrefix(h.Name, "./")] = h
		}
	}
	return files
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, mode))
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
