package tests

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
)

// budgetHeaders are the header sets a client might hope would exempt a
// request from the time budget: every upgrade spelling, and asking for an
// event stream in every way.
func budgetHeaders() [][]string {
	sets := [][]string{nil, {"Accept: text/event-stream"}, {"Accept: text/event-stream", "Content-Type: application/json"},
		{"Accept: application/json, text/event-stream"}, {"Accept: text/event-stream", "Cache-Control: no-cache", "Last-Event-ID: 1"}}
	for _, sp := range upgradeSpellings {
		sets = append(sets, sp.lines)
	}
	return sets
}

// TestNoHeaderExemptsFromTheBudget: with a budget spent before any request
// starts, every request to every keyed path answers 503 timeout whatever
// its headers — upgrade spellings, Accept: text/event-stream — unless it
// is a stream by the access layer's own definition on /graphql; then the
// connection is exempt but each of its operations is budgeted (and times
// out), or it is refused before anything runs (an invalid handshake).
func TestNoHeaderExemptsFromTheBudget(t *testing.T) {
	t.Parallel()
	a, addr := startLimitsServer(t, app.Config{RequestTimeout: time.Nanosecond, DBStatementTimeout: -1})
	base := "http://" + addr
	key, _ := accesstest.NewKey(t, a.DB, cryptointel.PlanEnterprise)
	param := regexp.MustCompile(`\{[^}]+\}`)
	type target struct{ method, path, body string }
	targets := []target{
		{http.MethodGet, "/graphql?query=" + url.QueryEscape("{ __typename }"), ""},
		{http.MethodPost, "/graphql", `{"query":"{ entity(id: 101) { id } }"}`},
	}
	for _, r := range a.V1Routes() {
		if r.Path == "/v1/stream" {
			continue // a stream by its path
		}
		targets = append(targets, target{r.Method, param.ReplaceAllString(r.Path, "101"), ""})
	}
	var budgeted, socketOps, sseOps, refused int
	for _, headers := range budgetHeaders() {
		for _, tg := range targets {
			name := fmt.Sprintf("%s %s with %q", tg.method, tg.path, headers)
			lines := append([]string{"Authorization: Bearer " + key}, headers...)
			if tg.body != "" && !strings.Contains(strings.Join(headers, "\n"), "Content-Type") {
				lines = append(lines, "Content-Type: application/json")
			}
			probe, err := http.NewRequest(tg.method, base+tg.path, nil)
			require.NoError(t, err)
			for _, l := range lines {
				k, v, _ := strings.Cut(l, ":")
				probe.Header.Add(k, strings.TrimSpace(v))
			}
			stream := strings.HasPrefix(tg.path, "/graphql") && access.IsStreamRequest(probe)

			resp, body, sock := rawExchange(t, base, tg.method, tg.path, tg.body, lines...)
			switch {
			case !stream:
				require.Nil(t, sock, name)
				require.Contains(t, string(body), cryptointel.MsgTimeout, name)
				if strings.HasPrefix(tg.path, "/graphql") && resp.StatusCode == http.StatusOK {
					// GraphQL over HTTP answers errors 200 to a client that
					// does not accept application/graphql-response+json.
					require.Contains(t, string(body), `"code":"timeout"`, name)
				} else {
					require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s: %s", name, body)
				}
				budgeted++
			case sock != nil:
				sock.init(t, nil)
				res := sock.query(t, "1", `{ entity(id: 101) { id } }`)
				require.Contains(t, fmt.Sprint(res["errors"]), cryptointel.ETIMEOUT, "%s: %v", name, res)
				sock.closeNow()
				socketOps++
			case strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
				require.Contains(t, string(body), `"code":"timeout"`, "%s: %s", name, body)
				sseOps++
			default:
				require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", name, body)
				refused++
			}
		}
	}
	require.Positive(t, socketOps)
	require.Positive(t, sseOps)
	summary(t, "time budget: %d non-stream requests with %d header sets all budgeted (503, or a GraphQL timeout error); %d WebSocket and %d graphql-sse operations each budgeted; %d invalid handshakes refused",
		budgeted, len(budgetHeaders()), socketOps, sseOps, refused)
}

// TestStatementTimeoutBehindTheBudget: the server's database connections
// carry statement_timeout (by default the request budget), so a statement
// the budget's context did not stop is cancelled by PostgreSQL itself.
func TestStatementTimeoutBehindTheBudget(t *testing.T) {
	t.Parallel()
	a, _ := startLimitsServer(t, app.Config{DBStatementTimeout: 150 * time.Millisecond})
	ctx := context.Background()
	var setting string
	require.NoError(t, a.DB.Pool.QueryRow(ctx, "SHOW statement_timeout").Scan(&setting))
	require.Equal(t, "150ms", setting)
	_, err := a.DB.Pool.Exec(ctx, "SELECT pg_sleep(5)")
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "%v", err)
	require.Equal(t, "57014", pgErr.Code, "query_canceled by statement_timeout")

	def, _ := startLimitsServer(t, app.Config{})
	require.NoError(t, def.DB.Pool.QueryRow(ctx, "SHOW statement_timeout").Scan(&setting))
	require.Equal(t, "30s", setting, "defaults to the request budget")
}
