//go:build unix

package app

import "syscall"

// openFileLimit is the process's soft limit of open files (Go raises it
// to the hard limit at start); 0 when unknown.
func openFileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return lim.Cur
}
