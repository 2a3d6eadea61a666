package app

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
)

// StatementCountHeader is the response header that carries the number of
// SQL statements the request ran, when Config.StatementCountHeader is set.
const StatementCountHeader = "X-Statement-Count"

// ReplicaStatementCountHeader is the response header that carries how many
// of those statements ran on a read replica (the others ran on the
// primary), when Config.StatementCountHeader is set and read replicas are
// configured.
const ReplicaStatementCountHeader = "X-Statement-Count-Replica"

// countStatements gives every request a statement counter
// (db.WithStatementCounter), and one of its statements on replicas when
// replicas is set, and reports their values in the X-Statement-Count (and
// X-Statement-Count-Replica) headers when the response's header is
// written: by then a buffered handler (the /v1 facade, /graphql) has run
// all its statements. The load harness (tests/bench) reads them.
func countStatements(next http.Handler, replicas bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, counter := db.WithStatementCounter(r.Context())
		sw := &statementWriter{ResponseWriter: w, counter: counter}
		if replicas {
			ctx, sw.replica = db.WithReplicaStatementCounter(ctx)
		}
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// statementWriter sets X-Statement-Count just before the header is sent.
type statementWriter struct {
	http.ResponseWriter
	counter *atomic.Int64
	replica *atomic.Int64
	wrote   bool
}

func (s *statementWriter) stamp() {
	if !s.wrote {
		s.wrote = true
		h := s.ResponseWriter.Header()
		h.Set(StatementCountHeader, strconv.FormatInt(s.counter.Load(), 10))
		if s.replica != nil {
			h.Set(ReplicaStatementCountHeader, strconv.FormatInt(s.replica.Load(), 10))
		}
	}
}

// WriteHeader stamps the count, then writes the header.
func (s *statementWriter) WriteHeader(status int) {
	s.stamp()
	s.ResponseWriter.WriteHeader(status)
}

// Write stamps the count (an implicit 200), then writes b.
func (s *statementWriter) Write(b []byte) (int, error) {
	s.stamp()
	return s.ResponseWriter.Write(b)
}

// Flush lets streaming handlers flush through the wrapper.
func (s *statementWriter) Flush() {
	s.stamp()
	http.NewResponseController(s.ResponseWriter).Flush() //nolint:errcheck
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statementWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// startPprof serves net/http/pprof on Config.PprofAddr until ctx is done.
// It is off unless PPROF_ADDR is set, and meant for a loopback address:
// profiles expose internals and cost CPU while taken.
func (a *App) startPprof(ctx context.Context) error {
	if a.Config.PprofAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", a.Config.PprofAddr)
	if err != nil {
		return fmt.Errorf("error listening for pprof on %s: %w", a.Config.PprofAddr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	a.Logger.Info("pprof listening", "addr", ln.Addr().String())
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.Logger.Error("pprof server stopped", "error", err)
		}
	}()
	go func() {
		<-ctx.Done()
		srv.Close() //nolint:errcheck
	}()
	return nil
}

// MsgMetricsToken is the 401 message of a /metrics scrape without the
// METRICS_TOKEN bearer token.
const MsgMetricsToken = "Metrics require the METRICS_TOKEN: send Authorization: Bearer <METRICS_TOKEN>."

// metricsGuard requires "Authorization: Bearer <token>" of /metrics when
// token is set, compared in constant time.
func metricsGuard(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, cred := access.ParseAuthorization(r.Header.Get("Authorization"))
		got := sha256.Sum256([]byte(cred))
		if scheme != "bearer" || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]string{"error": MsgMetricsToken}) //nolint:errcheck
			return
		}
		next.ServeHTTP(w, r)
	})
}
