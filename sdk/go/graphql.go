package cryptointel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/Khan/genqlient/graphql"
)

// GraphQLError is a GraphQL answer carrying errors (with HTTP 200).
type GraphQLError struct {
	Errors []struct {
		Message    string         `json:"message"`
		Path       []any          `json:"path,omitempty"`
		Extensions map[string]any `json:"extensions,omitempty"`
	}
}

func (e *GraphQLError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, x := range e.Errors {
		msgs[i] = x.Message
	}
	return "cryptointel: graphql: " + strings.Join(msgs, "; ")
}

// Query runs a GraphQL query (or mutation) on /graphql with variables and
// decodes its data into out (a pointer to a struct shaped like the
// selection). Errors in the answer are a *GraphQLError; refusals (401,
// 402, 429 …) an *APIError, retried and paid like any request.
func (c *Client) Query(ctx context.Context, query string, variables map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": variables})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base.String()+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		// A document that does not validate: its errors, as GraphQL gives them.
		return graphQLRefusal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var ans struct {
		Data   json.RawMessage `json:"data"`
		Errors json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return fmt.Errorf("cryptointel: graphql answer: %w", err)
	}
	if len(ans.Errors) > 0 && string(ans.Errors) != "null" {
		ge := &GraphQLError{}
		json.Unmarshal(ans.Errors, &ge.Errors) //nolint:errcheck
		return ge
	}
	if out == nil || len(ans.Data) == 0 {
		return nil
	}
	return json.Unmarshal(ans.Data, out)
}

// GraphQL is a genqlient client of /graphql that sends through this
// client (credential, retries, payer): pass it to the typed functions
// generated from queries.graphql, e.g. EntityGraph(ctx, c.GraphQL(), 101, 5).
func (c *Client) GraphQL() graphql.Client {
	return graphql.NewClient(c.base.String()+"/graphql", doer{c})
}
