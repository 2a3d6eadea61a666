package app

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSettings(t *testing.T) {
	t.Parallel()

	settings := Settings()
	byField := map[string]Setting{}
	for _, s := range settings {
		byField[s.Field] = s
	}
	// Every field of Config is documented, in declaration order.
	typ := reflect.TypeFor[Config]()
	require.Len(t, settings, typ.NumField())
	for i := range typ.NumField() {
		f := typ.Field(i)
		require.Equal(t, f.Name, settings[i].Field)
		require.NotEmpty(t, settings[i].Doc, "Config.%s needs a doc comment", f.Name)
	}

	require.Equal(t, Setting{Field: "DatabaseURL", Env: "DATABASE_URL", Doc: "The PostgreSQL URL."}, byField["DatabaseURL"])
	require.Equal(t, Setting{Field: "Addr", Env: "ADDR", Doc: `The listen address. Defaults to ":8080".`}, byField["Addr"])
	require.Equal(t, "DB_MAX_CONNS", byField["DBMaxConns"].Env)
	require.Equal(t, "Guards POST /admin/ingest; empty disables it.", byField["AdminToken"].Doc)
	require.Equal(t, "SHUTDOWN_TIMEOUT", byField["ShutdownTimeout"].Env)
}

func TestEnvName(t *testing.T) {
	t.Parallel()
	for field, env := range map[string]string{
		"DatabaseURL":       "DATABASE_URL",
		"DBMaxConns":        "DB_MAX_CONNS",
		"Addr":              "ADDR",
		"WebhookAllowCIDRs": "WEBHOOK_ALLOW_CIDRS",
		"ExportDir":         "EXPORT_DIR",
		"HTTPTimeout":       "HTTP_TIMEOUT",
		"MaxBodyBytes":      "MAX_BODY_BYTES",
		"X402PayTo":         "X402_PAY_TO",
	} {
		require.Equal(t, env, EnvName(field), field)
	}
}

func TestDefaultConfig(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	require.Equal(t, ":8080", c.Addr)
	require.Equal(t, 16, c.DBMaxConns)
	require.Positive(t, c.ShutdownTimeout)
}
