package access

import "context"

// A mark is a yes carried by a request's context, keyed by its own empty
// struct type K (refusedKey, statusUnreadKey, mcpAudienceKey): set by
// withMark, read by marked (false when never set).

func withMark[K any](ctx context.Context) context.Context {
	var k K
	return context.WithValue(ctx, k, true)
}

func marked[K any](ctx context.Context) bool {
	var k K
	v, _ := ctx.Value(k).(bool)
	return v
}
