package tests

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRelease runs the release script (what `make release` runs) twice,
// into two folders: every file it writes must be byte-identical across the
// two builds (the release is reproducible), SHA256SUMS must hold every
// archive and SBOM with its true hash, the host's archive must unpack to a
// binary that prints the version it was given (and LICENSE, README.md and
// CHANGELOG.md beside it), and the SBOM must be CycloneDX naming the
// binary's hash and the modules linked in.
func TestRelease(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "tar", "gzip", "sha256sum", "git"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "the release script needs %s", tool)
	}
	// The host's platform only: another one compiles every package afresh
	// (minutes on two cores); RELEASE_TEST_PLATFORMS adds others, e.g.
	// "linux/amd64 darwin/arm64". make release builds the four.
	platforms := runtime.GOOS + "/" + runtime.GOARCH
	if p := os.Getenv("RELEASE_TEST_PLATFORMS"); p != "" {
		platforms = p
	}
	const version = "v0.0.0-releasetest"
	build := func() string {
		out := t.TempDir()
		cmd := exec.Command("bash", "../scripts/release.sh", out)
		cmd.Env = append(os.Environ(), "PLATFORMS="+platforms, "VERSION="+version)
		msg, err := cmd.CombinedOutput()
		require.NoError(t, err, string(msg))
		return out
	}
	first, second := build(), build()

	names := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	files := names(first)
	require.Equal(t, files, names(second))
	for _, p := range strings.Fields(platforms) {
		base := "cryptointel_" + version + "_" + strings.ReplaceAll(p, "/", "_")
		require.Contains(t, files, base+".tar.gz")
		require.Contains(t, files, base+".cdx.json")
	}
	require.Contains(t, files, "SHA256SUMS")
	for _, f := range files {
		a, err := os.ReadFile(filepath.Join(first, f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(second, f))
		require.NoError(t, err)
		require.True(t, bytes.Equal(a, b), "%s differs between two builds of the same commit", f)
	}

	// The checksums verify, with the tool a user runs and by hand.
	check := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	check.Dir = first
	msg, err := check.CombinedOutput()
	require.NoError(t, err, string(msg))
	sums, err := os.ReadFile(filepath.Join(first, "SHA256SUMS"))
	require.NoError(t, err)
	listed := 0
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		require.True(t, ok, line)
		b, err := os.ReadFile(filepath.Join(first, name))
		require.NoError(t, err)
		h := sha256.Sum256(b)
		require.Equal(t, hex.EncodeToString(h[:]), sum, name)
		listed++
	}
	require.Equal(t, len(files)-1, listed, "SHA256SUMS lists every other file")

	// The host's archive unpacks to a binary that runs.
	base := "cryptointel_" + version + "_" + runtime.GOOS + "_" + runtime.GOARCH
	dest := t.TempDir()
	msg, err = exec.Command("tar", "-xzf", filepath.Join(first, base+".tar.gz"), "-C", dest).CombinedOutput()
	require.NoError(t, err, string(msg))
	for _, f := range []string{"cryptointel", "LICENSE", "README.md", "CHANGELOG.md"} {
		require.FileExists(t, filepath.Join(dest, base, f))
	}
	bin := filepath.Join(dest, base, "cryptointel")
	out, err := exec.Command(bin, "version").CombinedOutput()
	require.NoError(t, err, string(out))
	require.True(t, strings.HasPrefix(string(out), "cryptointel "+version+" "), "version printed: %s", out)
	require.Contains(t, string(out), runtime.GOOS+"/"+runtime.GOARCH)
	listing, err := exec.Command("tar", "-tvzf", filepath.Join(first, base+".tar.gz")).Output()
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(listing)), "\n") {
		require.Contains(t, line, " 0/0 ", "entries owned by 0:0: %s", line)
	}

	// The SBOM describes that binary.
	raw, err := os.ReadFile(filepath.Join(first, base+".cdx.json"))
	require.NoError(t, err)
	var sbom struct {
		BOMFormat   string `json:"bomFormat"`
		SpecVersion string `json:"specVersion"`
		Metadata    struct {
			Component struct {
				Name   string `json:"name"`
				Hashes []struct {
					Alg     string `json:"alg"`
					Content string `json:"content"`
				} `json:"hashes"`
			} `json:"component"`
		} `json:"metadata"`
		Components []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
			PURL    string `json:"purl"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(raw, &sbom))
	require.Equal(t, "CycloneDX", sbom.BOMFormat)
	require.Equal(t, "cryptointel", sbom.Metadata.Component.Name)
	binBytes, err := os.ReadFile(bin)
	require.NoError(t, err)
	h := sha256.Sum256(binBytes)
	require.Len(t, sbom.Metadata.Component.Hashes, 1)
	require.Equal(t, hex.EncodeToString(h[:]), sbom.Metadata.Component.Hashes[0].Content)
	mods := map[string]string{}
	for _, c := range sbom.Components {
		mods[c.Name] = c.Version
		require.True(t, strings.HasPrefix(c.PURL, "pkg:golang/"), c.PURL)
	}
	for _, m := range []string{"github.com/jackc/pgx/v5", "github.com/99designs/gqlgen", "std"} {
		require.NotEmpty(t, mods[m], "the SBOM lists %s", m)
	}
	summary(t, "release: %s reproducible across two builds (%d files, %d modules in the SBOM); %s", platforms, len(files), len(sbom.Components), strings.TrimSpace(string(out)))
}
