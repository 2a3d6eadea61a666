package tests

import (
	"log/slog"
	"sync"
	"testing"
)

// testLogger is a logger for a server a test starts: its ERROR lines go to
// the test's log, so an answer of 500 comes with its cause, and nothing
// else is written. Lines logged after the test has ended (a server
// goroutine still stopping) are dropped rather than reported to a finished
// test.
func testLogger(t testing.TB) *slog.Logger {
	w := &testLogWriter{t: t}
	t.Cleanup(w.close) // registered first, so it runs after the server's cleanups
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelError}))
}

type testLogWriter struct {
	mu     sync.Mutex
	t      testing.TB
	closed bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.t.Logf("server: %s", p)
	}
	return len(p), nil
}

func (w *testLogWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}
