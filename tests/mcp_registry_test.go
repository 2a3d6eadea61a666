package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// registryServer is the part of server.json (the MCP Registry's
// description of the server, schema 2025-12-11) the test reads.
type registryServer struct {
	Schema      string `json:"$schema"`
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Version     string `json:"version"`
	Repository  struct {
		URL    string `json:"url"`
		Source string `json:"source"`
	} `json:"repository"`
	Remotes []struct {
		Type    string `json:"type"`
		URL     string `json:"url"`
		Headers []struct {
			Name     string `json:"name"`
			IsSecret bool   `json:"isSecret"`
		} `json:"headers"`
		Variables map[string]struct {
			IsRequired bool `json:"isRequired"`
		} `json:"variables"`
	} `json:"remotes"`
	Packages []struct {
		RegistryType string `json:"registryType"`
		Identifier   string `json:"identifier"`
		Transport    struct {
			Type string `json:"type"`
		} `json:"transport"`
		PackageArguments []struct {
			Type  string `json:"type"`
			Value string `json:"value"`
		} `json:"packageArguments"`
		EnvironmentVariables []struct {
			Name string `json:"name"`
		} `json:"environmentVariables"`
	} `json:"packages"`
}

// TestMCPRegistryServerJSON: server.json describes the server the binary
// serves: the registry's rules for a name, description and version hold;
// its name, title and version are what initialize reports; its remote,
// with the test server's host for {host}, is an MCP endpoint the Go SDK's
// client connects to; its package is the image of this version (labelled
// with the server's name, as the registry checks) run as the stdio bridge
// with the environment the bridge reads.
func TestMCPRegistryServerJSON(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "server.json"))
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	var sj registryServer
	require.NoError(t, dec.Decode(&sj))
	var loose map[string]any
	require.NoError(t, json.Unmarshal(raw, &loose))
	for key := range loose {
		require.Contains(t, []string{"$schema", "name", "title", "description", "version", "websiteUrl", "repository", "remotes", "packages"}, key,
			"a member of the registry's schema")
	}
	require.Equal(t, "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json", sj.Schema)
	require.Regexp(t, `^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`, sj.Name)
	require.True(t, strings.HasPrefix(sj.Name, "io.github.cryptointel/"), "a GitHub namespace the repository proves")
	require.NotEmpty(t, sj.Description)
	require.LessOrEqual(t, len(sj.Description), 100, "the registry's bound on a description")
	require.Regexp(t, `^\d+\.\d+\.\d+$`, sj.Version, "a plain semantic version")
	require.Equal(t, "github", sj.Repository.Source)

	s := startRESTServer(t)
	require.Len(t, sj.Remotes, 1)
	remote := sj.Remotes[0]
	require.Equal(t, "streamable-http", remote.Type)
	require.True(t, remote.Variables["host"].IsRequired)
	require.Equal(t, "Authorization", remote.Headers[0].Name)
	require.True(t, remote.Headers[0].IsSecret)
	endpoint := strings.Replace(remote.URL, "https://{host}", s.base, 1)
	require.NotEqual(t, remote.URL, endpoint, "the remote's url is https://{host}/…")
	client := sdk.NewClient(&sdk.Implementation{Name: "registry-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: headerTransport{header: http.Header{"Authorization": {"Bearer " + s.apiKey(t)}}}}}, nil)
	require.NoError(t, err, "the remote's url serves MCP")
	defer cs.Close()
	info := cs.InitializeResult().ServerInfo
	require.Equal(t, sj.Version, info.Version, "server.json's version is the one the server reports")
	require.Equal(t, sj.Title, info.Title)
	require.Equal(t, sj.Name[strings.LastIndex(sj.Name, "/")+1:], info.Name)

	require.Len(t, sj.Packages, 1)
	pkg := sj.Packages[0]
	require.Equal(t, "oci", pkg.RegistryType)
	require.True(t, strings.HasSuffix(pkg.Identifier, ":"+sj.Version), "the image of this version: %s", pkg.Identifier)
	require.Equal(t, "stdio", pkg.Transport.Type)
	require.Equal(t, "mcp", pkg.PackageArguments[0].Value, "the image's entrypoint is the binary: `cryptointel mcp` is the stdio bridge")
	commands, err := os.ReadFile(filepath.Join("..", "cmd", "cryptointel", "commands.go"))
	require.NoError(t, err)
	for _, env := range pkg.EnvironmentVariables {
		require.Contains(t, string(commands), `m.Getenv("`+env.Name+`")`, "the bridge reads %s", env.Name)
	}
	containerfile, err := os.ReadFile(filepath.Join("..", "deploy", "Containerfile"))
	require.NoError(t, err)
	label := regexp.MustCompile(`(?m)^LABEL io\.modelcontextprotocol\.server\.name="([^"]+)"`).FindStringSubmatch(string(containerfile))
	require.NotNil(t, label, "the image carries the registry's ownership label")
	require.Equal(t, sj.Name, label[1])
}
