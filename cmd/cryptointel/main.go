// Command cryptointel runs the crypto intelligence service and its
// operations: migrate, serve, ingest, seed demo data and create API keys.
// Every setting comes from a flag or its environment variable; see
// `cryptointel serve --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one kills the process at once.
		<-ctx.Done()
		stop()
	}()
	m := NewMain()
	err := m.Run(ctx, os.Args[1:])
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	stop()
	if err != nil {
		var quiet *exitError
		if !errors.As(err, &quiet) || quiet.msg != "" {
			fmt.Fprintln(os.Stderr, "error:", err)
		}
		os.Exit(1)
	}
}

// Main is the program: its I/O and environment are fields so tests run it
// in process.
type Main struct {
	// Stdin, Stdout and Stderr default to the process's.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment. Defaults to os.Getenv.
	Getenv func(string) string
	// IsTerminal reports whether a writer is a terminal, where seed and
	// ingest draw progress bars instead of plain lines. Defaults to
	// golang.org/x/term's check of an *os.File.
	IsTerminal func(io.Writer) bool
	// OnListen, when set, is called with the bound address once serve
	// listens (tests serve on 127.0.0.1:0).
	OnListen func(net.Addr)

	closers []func() error
}

// NewMain returns a Main wired to the process.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
}

// Run executes the command line args (without the program name) until it
// is done or ctx is cancelled.
func (m *Main) Run(ctx context.Context, args []string) error {
	root := m.rootCommand()
	root.SetArgs(args)
	root.SetIn(m.Stdin)
	root.SetOut(m.Stdout)
	root.SetErr(m.Stderr)
	return root.ExecuteContext(ctx)
}

// Close releases what Run opened (database pools, the app).
func (m *Main) Close() error {
	var errs []error
	for i := len(m.closers) - 1; i >= 0; i-- {
		errs = append(errs, m.closers[i]())
	}
	m.closers = nil
	return errors.Join(errs...)
}

// exitError makes the process exit non-zero; an empty msg prints nothing
// more (the command already reported).
type exitError struct{ msg string }

func (e *exitError) Error() string { return e.msg }
