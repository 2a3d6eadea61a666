package app

import (
	"context"
	"net/http"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/mcp"
	"github.com/cryptointel/cryptointel/rest"
)

// mcpCall runs the MCP tools' route calls in process through the /v1
// router's typed entry (rest.Router.Call): the same access layer, parsing,
// bounds and operation as a request, without one.
func mcpCall(v1 *rest.Router) func(ctx context.Context, route string, values map[string]string, header http.Header, host, remoteAddr string, tls bool) mcp.RouteAnswer {
	return func(ctx context.Context, route string, values map[string]string, header http.Header, host, remoteAddr string, tls bool) mcp.RouteAnswer {
		res := v1.Call(ctx, route, values, rest.InProcess{Header: header, Host: host, RemoteAddr: remoteAddr, TLS: tls, Spans: true, Lend: true, StatusUnread: true})
		return mcp.RouteAnswer{Status: res.Status, Marks: res.Marks, Body: res.Body, Tag: res.Tag, Spans: res.Spans, Release: res.Release}
	}
}

// mcpSuggest is what /mcp's completion/complete suggests from: entity
// names through the resolver resolve_entity's route runs (the display
// name of each entity matched, strongest match first), and the
// categories and relationship types in use, all read from the readers.
func (a *App) mcpSuggest() mcp.Suggest {
	return mcp.Suggest{
		EntityNames: func(ctx context.Context, prefix string, n int) ([]mcp.EntityName, error) {
			version := access.DataVersion(ctx)
			// The matches with their entities, in one statement (from the
			// names in memory when the request was metered).
			ms, entities, _, err := a.DB.ResolveEntitiesFolded(ctx, version, prefix, n, 0, false)
			if err != nil {
				return nil, err
			}
			names := make(map[int64]string, len(entities))
			for _, e := range entities {
				names[e.ID] = e.DisplayName
			}
			out := make([]mcp.EntityName, 0, len(ms))
			for _, m := range ms {
				if name := names[m.EntityID]; name != "" {
					out = append(out, mcp.EntityName{ID: m.EntityID, Name: name})
				}
			}
			return out, nil
		},
		Categories: func(ctx context.Context) ([]string, error) {
			cats, err := db.EventCategories(ctx, a.DB.Reader())
			if err != nil {
				return nil, err
			}
			out := make([]string, len(cats))
			for i, c := range cats {
				out[i] = c.Name
			}
			return out, nil
		},
		RelationshipTypes: func(ctx context.Context) ([]string, error) {
			return db.RelationshipTypes(ctx, a.DB.Reader())
		},
	}
}
