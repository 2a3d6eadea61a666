// Command openapidoc writes the OpenAPI document the server serves at
// /openapi.json, byte for byte, to sdk/openapi.json: the input the client
// libraries under sdk/ are generated from. It builds the /v1 route table the way app.App mounts it
// (graph routes, webhooks, usage, exports, keys, stream tickets and the
// stream), with no database: the document depends on the table only.
// tests/sdk_typescript_test.go checks the file is what a running server
// serves.
package main

//go:generate go run . ../../sdk/openapi.json

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/graph/jsonw"
	"github.com/cryptointel/cryptointel/rest"
)

// unused stands for the handlers: the document never calls one.
func unused(http.ResponseWriter, *http.Request) error { return nil }

// noExecutor satisfies rest.Executor: the document never runs an operation.
type noExecutor struct{}

func (noExecutor) Run(context.Context, string, string, map[string]any, *jsonw.Writer) gqlerror.List {
	return nil
}

func document() ([]byte, error) {
	now := func() time.Time { return time.Time{} }
	routes := append(append(append(rest.WebhookRoutes(&rest.WebhookHandlers{}), rest.UsageRoute(unused)), rest.ExportRoutes(&rest.ExportHandlers{})...),
		append(rest.KeyRoutes(&rest.KeyHandlers{}), rest.TicketRoute(func([]byte, string, url.Values, time.Time) (string, time.Time, error) { return "", time.Time{}, nil }, now))...)
	rt, err := rest.New(rest.Config{
		Executor: noExecutor{},
		Schema:   graph.NewExecutableSchema(graph.Config{}).Schema(),
		Routes:   routes,
		Stream: rest.StreamConfig{
			Subscribe: func(context.Context, string, string, map[string]any) (rest.EventStream, *graphql.Response) {
				return nil, nil
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("error building the /v1 routes: %w", err)
	}
	return rt.OpenAPI(), nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: openapidoc OUTPUT.json")
		os.Exit(2)
	}
	doc, err := document()
	if err == nil {
		err = os.WriteFile(os.Args[1], doc, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "openapidoc: %v\n", err)
		os.Exit(1)
	}
}
