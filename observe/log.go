package observe

import (
	"io"
	"log/slog"
	"strings"
)

// NewLogger returns a JSON slog logger writing to w at level. Attributes
// whose key names a credential (authorization, api_key, token, secret,
// password, cookie, in any case or as part of a longer key) are replaced by
// "[REDACTED]", so a careless log call cannot leak one.
func NewLogger(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level:       level,
		ReplaceAttr: redact,
	}))
}

// sensitiveKeys are substrings of attribute keys whose values are never
// logged.
var sensitiveKeys = []string{"authorization", "api_key", "apikey", "token", "secret", "password", "cookie"}

func redact(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindGroup {
		return a
	}
	key := strings.ToLower(a.Key)
	for _, s := range sensitiveKeys {
		if strings.Contains(key, s) {
			return slog.String(a.Key, "[REDACTED]")
		}
	}
	return a
}
