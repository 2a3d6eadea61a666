package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/demo"
)

// mcpNow is the instant the MCP tests and benchmarks seed and answer at.
var mcpNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// seededApp starts the whole service on the database at url, response
// cache off (every call computed), migrated, its clock at mcpNow and
// seeded with events demo events; closed when tb ends. cursorSecret may
// be empty.
func seededApp(tb testing.TB, url string, maxConns, events int, cursorSecret string) *app.App {
	tb.Helper()
	ctx := context.Background()
	a, err := app.New(ctx, app.Config{DatabaseURL: url, DBMaxConns: maxConns, ResponseCacheTTL: -time.Second,
		CursorSecret: cursorSecret, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), ShutdownTimeout: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { a.Close() }) //nolint:errcheck
	if err := a.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	a.DB.Now = func() time.Time { return mcpNow }
	if _, err := demo.Seed(ctx, a.DB, demo.Options{Events: events}); err != nil {
		tb.Fatal(err)
	}
	return a
}

// toolCall is a tools/call POST to /mcp of tool with args (a JSON object),
// as a Streamable HTTP client sends it, with key as its bearer key.
func toolCall(tool, args, key string) *http.Request {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer "+key)
	return r
}
