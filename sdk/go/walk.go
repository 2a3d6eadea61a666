package cryptointel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"time"
)

// PageFetcher fetches one page of a cursor route: the first with cursor
// nil, then each with the previous page's next_cursor and the walk's
// since (nil until the first page names it).
type PageFetcher func(ctx context.Context, cursor *string, since *time.Time) (*http.Response, error)

// Walk iterates over every item of a cursor walk: it keeps the `since` of
// the first page for the next ones (a cursor is only valid with the same
// since) and stops at a null next_cursor. An error ends the walk as the
// last pair.
func Walk[T any](ctx context.Context, fetch PageFetcher) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		var cursor *string
		var since *time.Time
		for {
			resp, err := fetch(ctx, cursor, since)
			if err != nil {
				yield(zero, err)
				return
			}
			var page struct {
				Since      *time.Time `json:"since"`
				NextCursor *string    `json:"next_cursor"`
				Data       []T        `json:"data"`
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil {
				err = json.Unmarshal(body, &page)
			}
			if err != nil {
				yield(zero, fmt.Errorf("cryptointel: reading a page: %w", err))
				return
			}
			for _, it := range page.Data {
				if !yield(it, nil) {
					return
				}
			}
			if page.NextCursor == nil || *page.NextCursor == "" {
				return
			}
			cursor = page.NextCursor
			if since == nil {
				since = page.Since
			}
		}
	}
}

// withSince returns the caller's since when set, else the walk's.
func withSince(mine, walk *time.Time) *time.Time {
	if mine != nil {
		return mine
	}
	return walk
}

// RadarAllItems walks /v1/radar/all from params (Cursor and Since set by the walk).
func (c *Client) RadarAllItems(ctx context.Context, params GetV1RadarAllParams) iter.Seq2[Event, error] {
	return Walk[Event](ctx, func(ctx context.Context, cursor *string, since *time.Time) (*http.Response, error) {
		p := params
		p.Cursor = cursor // since is required: the caller's, kept
		return c.ClientInterface.GetV1RadarAll(ctx, &p)
	})
}

// SignalAllItems walks /v1/signal/all.
func (c *Client) SignalAllItems(ctx context.Context, params GetV1SignalAllParams) iter.Seq2[Event, error] {
	return Walk[Event](ctx, func(ctx context.Context, cursor *string, since *time.Time) (*http.Response, error) {
		p := params
		p.Cursor = cursor // since is required: the caller's, kept
		return c.ClientInterface.GetV1SignalAll(ctx, &p)
	})
}

// ReplayGlobalItems walks /v1/replay/global.
func (c *Client) ReplayGlobalItems(ctx context.Context, params GetV1ReplayGlobalParams) iter.Seq2[Event, error] {
	return Walk[Event](ctx, func(ctx context.Context, cursor *string, since *time.Time) (*http.Response, error) {
		p := params
		p.Cursor = cursor // since is required: the caller's, kept
		return c.ClientInterface.GetV1ReplayGlobal(ctx, &p)
	})
}

// TimelineItems walks /v1/timeline/byOrganizationId.
func (c *Client) TimelineItems(ctx context.Context, params GetV1TimelineByOrganizationIdParams) iter.Seq2[Event, error] {
	return Walk[Event](ctx, func(ctx context.Context, cursor *string, since *time.Time) (*http.Response, error) {
		p := params
		p.Cursor, p.Since = cursor, withSince(params.Since, since)
		return c.ClientInterface.GetV1TimelineByOrganizationId(ctx, &p)
	})
}

// ResearchItems walks /v1/entities/{id}/research.
func (c *Client) ResearchItems(ctx context.Context, id int, params GetV1EntitiesIdResearchParams) iter.Seq2[ContentEvent, error] {
	return Walk[ContentEvent](ctx, func(ctx context.Context, cursor *string, since *time.Time) (*http.Response, error) {
		p := params
		p.Cursor, p.Since = cursor, withSince(params.Since, since)
		return c.ClientInterface.GetV1EntitiesIdResearch(ctx, id, &p)
	})
}

// MediaItems walks /v1/entities/{id}/media.
func (c *Client) MediaItems(ctx context.Context, id int, params GetV1EntitiesIdMediaParams) iter.Seq2[ContentEvent, error] {
	return Walk[ContentEvent](ctx, func(ctx context.Context, cursor *string, since *time.Time) (*http.Response, error) {
		p := params
		p.Cursor, p.Since = cursor, withSince(params.Since, since)
		return c.ClientInterface.GetV1EntitiesIdMedia(ctx, id, &p)
	})
}

// SearchItems walks /v1/search.
func (c *Client) SearchItems(ctx context.Context, params GetV1SearchParams) iter.Seq2[SearchEvent, error] {
	return Walk[SearchEvent](ctx, func(ctx context.Context, cursor *string, since *time.Time) (*http.Response, error) {
		p := params
		p.Cursor, p.Since = cursor, withSince(params.Since, since)
		return c.ClientInterface.GetV1Search(ctx, &p)
	})
}

// Lean returns the event in the lean shape (canonical names only), the
// default of this client.
func (e Event) Lean() (EventLean, error) {
	var l EventLean
	err := json.Unmarshal(e.union, &l)
	return l, err
}

// Full returns the event in the full shape (canonical and legacy names),
// asked for WithLegacy.
func (e Event) Full() (EventFull, error) {
	var f EventFull
	err := json.Unmarshal(e.union, &f)
	return f, err
}
