package tests

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// summaryFileEnv names the file `make test` collects the tests' counts in
// (requests tried, 5xx seen, events lost, …) and prints after the run; go
// test shows a passing test's log only under -v.
const summaryFileEnv = "TEST_SUMMARY_FILE"

var summaryMu sync.Mutex

// summary logs a test's counts and, when TEST_SUMMARY_FILE is set, appends
// them to that file as one line prefixed with the test's name. A failure to
// write the file is logged, never fatal: the counts are a report, the
// assertions are the test.
func summary(t testing.TB, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	path := os.Getenv(summaryFileEnv)
	if path == "" {
		return
	}
	summaryMu.Lock()
	defer summaryMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Logf("error opening %s: %v", summaryFileEnv, err)
		return
	}
	if _, err := fmt.Fprintf(f, "%s: %s\n", t.Name(), line); err != nil {
		t.Logf("error writing %s: %v", summaryFileEnv, err)
	}
	if err := f.Close(); err != nil {
		t.Logf("error closing %s: %v", summaryFileEnv, err)
	}
}
