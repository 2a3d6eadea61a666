package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/cryptointel/cryptointel/demo"
	"github.com/cryptointel/cryptointel/ingest"
)

// isTerminal reports whether w is a terminal, using Main.IsTerminal when
// set.
func (m *Main) isTerminal(w io.Writer) bool {
	if m.IsTerminal != nil {
		return m.IsTerminal(w)
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newBar returns a progress bar drawn on w (a terminal) with max steps, or
// a spinner when max is -1. bytes shows the steps as byte sizes.
func newBar(w io.Writer, max int64, description string, bytes bool) *progressbar.ProgressBar {
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(description),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
		progressbar.OptionSetRenderBlankState(true),
	}
	if bytes {
		opts = append(opts, progressbar.OptionShowBytes(true), progressbar.OptionShowTotalBytes(true))
	} else {
		opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString("events"))
	}
	return progressbar.NewOptions64(max, opts...)
}

// barLines writes whole lines above a progress bar: the bar is cleared
// first and redrawn by its next update.
type barLines struct {
	w   io.Writer
	bar *atomic.Pointer[progressbar.ProgressBar]
}

func (b barLines) Write(p []byte) (int, error) {
	if bar := b.bar.Load(); bar != nil && !bar.IsFinished() {
		bar.Clear() //nolint:errcheck
	}
	return b.w.Write(p)
}

// seedProgress sets opts to report seed progress on w: a bar of events
// written when w is a terminal, plain lines otherwise. The returned func
// ends the bar.
func (m *Main) seedProgress(w io.Writer, opts *demo.Options) (done func()) {
	if !m.isTerminal(w) {
		opts.Progress = w
		return func() {}
	}
	var bar atomic.Pointer[progressbar.ProgressBar]
	opts.Progress = barLines{w: w, bar: &bar}
	opts.OnEvents = func(n, total int) {
		b := bar.Load()
		if b == nil {
			b = newBar(w, int64(total), "seed: events", false)
			bar.Store(b)
		}
		b.Set(n) //nolint:errcheck
	}
	return func() {
		if b := bar.Load(); b != nil && !b.IsFinished() {
			b.Exit() //nolint:errcheck
		}
	}
}

// plainIngestEvery is how many batches pass between two plain progress
// lines of ingest.
const plainIngestEvery = 10

// ingestProgress sets opts to report ingest progress on w and returns the
// reader to ingest from (in, counting bytes) and a func ending the report.
// On a terminal it draws a bar of bytes read out of size (a spinner when
// size is unknown, -1) described with the lines read; otherwise it prints a
// plain line every plainIngestEvery batches.
func (m *Main) ingestProgress(w io.Writer, in io.Reader, size int64, opts *ingest.Options) (io.Reader, func(ok bool)) {
	started := time.Now()
	if !m.isTerminal(w) {
		counted := &countingReader{r: in}
		batches := 0
		opts.Progress = func(lines int) {
			if batches++; batches%plainIngestEvery != 0 {
				return
			}
			fmt.Fprintf(w, "ingest: %d lines read (%.1f MiB, %s)\n", lines,
				float64(counted.n.Load())/(1<<20), time.Since(started).Round(100*time.Millisecond))
		}
		return counted, func(bool) {}
	}
	if size <= 0 {
		size = -1
	}
	bar := newBar(w, size, "ingest", true)
	opts.Progress = func(lines int) {
		if !bar.IsFinished() {
			bar.Describe(fmt.Sprintf("ingest: %d lines", lines))
		}
	}
	r := progressbar.NewReader(in, bar)
	return &r, func(ok bool) {
		if ok && size > 0 {
			bar.Finish() //nolint:errcheck
		} else if !bar.IsFinished() {
			bar.Exit() //nolint:errcheck
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
