package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// stmtProbe is one request whose statement count is reported beside the
// same request at other page sizes or depths.
type stmtProbe struct {
	route string
	size  string
	stmts int
}

// probeStatements sends single requests at several page sizes and depths
// and reads X-Statement-Count from each, to show that the count does not
// grow with limit or fan-out.
func probeStatements(ctx context.Context, client *http.Client, base string, fx *fixtures) ([]stmtProbe, error) {
	var out []stmtProbe
	once := func(route, size, key string, req *http.Request) (int, error) {
		req = req.Clone(ctx)
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return 0, err
			}
			req.Body = body
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			return 0, fmt.Errorf("error probing %s: %w", route, err)
		}
		io.Copy(io.Discard, resp.Body) //nolint:errcheck
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("error probing %s (%s): status %d", route, size, resp.StatusCode)
		}
		n, _ := strconv.Atoi(resp.Header.Get(statementHeader))
		return n, nil
	}
	// Each request is sent twice with one key and the smaller count kept:
	// the access layer re-reads the plans every 30 seconds, one statement
	// on whichever request finds them stale, and looks up a key it has not
	// seen in the last minute before it reads a /graphql document (one
	// statement a key a minute, not a request: access/door.go).
	do := func(route, size string, req *http.Request) error {
		best := -1
		key := fx.keys.get()
		for range 2 {
			n, err := once(route, size, key, req)
			if err != nil {
				return err
			}
			if best < 0 || n < best {
				best = n
			}
		}
		out = append(out, stmtProbe{route: route, size: size, stmts: best})
		return nil
	}

	for _, limit := range []int{1, 10, 25} {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/latest?limit="+strconv.Itoa(limit), nil)
		if err := do("GET /v1/latest", "limit="+strconv.Itoa(limit), req); err != nil {
			return nil, err
		}
	}
	for _, n := range []int{1, 5, 25} {
		body, _ := json.Marshal(map[string]any{"query": threeHopQuery, "variables": map[string]any{"id": fx.entityIDs[0], "n": n}})
		req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if err := do("POST /graphql (3 hops)", fmt.Sprintf("%d per level", n), req); err != nil {
			return nil, err
		}
	}
	return out, nil
}
