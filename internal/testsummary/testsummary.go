// Package testsummary lets tests report counts (requests tried, 5xx seen,
// events lost, the slowest validation…) that `make test` and `make fuzz`
// print after the run: go test shows a passing test's log only under -v.
package testsummary

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// FileEnv names the file the counts are collected in, one line per report
// prefixed with the test's name. make test and make fuzz set it.
const FileEnv = "TEST_SUMMARY_FILE"

var mu sync.Mutex

// Write logs a test's counts and, when FileEnv is set, appends them to that
// file. A failure to write the file is logged, never fatal: the counts are
// a report, the assertions are the test.
func Write(t testing.TB, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	path := os.Getenv(FileEnv)
	if path == "" {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Logf("error opening %s: %v", FileEnv, err)
		return
	}
	if _, err := fmt.Fprintf(f, "%s: %s\n", t.Name(), line); err != nil {
		t.Logf("error writing %s: %v", FileEnv, err)
	}
	if err := f.Close(); err != nil {
		t.Logf("error closing %s: %v", FileEnv, err)
	}
}
