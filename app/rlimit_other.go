//go:build !unix

package app

// openFileLimit is unknown outside Unix: 0.
func openFileLimit() uint64 { return 0 }
