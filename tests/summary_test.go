package tests

import (
	"testing"

	"github.com/cryptointel/cryptointel/internal/testsummary"
)

// summary logs a test's counts and appends them to the file `make test`
// prints after the run (testsummary.Write).
func summary(t testing.TB, format string, args ...any) {
	t.Helper()
	testsummary.Write(t, format, args...)
}
