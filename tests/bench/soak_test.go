package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestSoakRoutesAreScenarios holds every route a soak mix may name to a
// measured scenario, and the default mix to the names it may use.
func TestSoakRoutesAreScenarios(t *testing.T) {
	scs := scenarios(&fixtures{now: time.Now()})
	names := map[string]bool{}
	for _, sc := range scs {
		names[sc.name] = true
	}
	for key, name := range soakRoutes {
		if !names[name] {
			t.Errorf("soakRoutes[%q] = %q is not a scenario of the benchmark", key, name)
		}
	}
	mix, err := parseMix(defaultSoakMix, scs)
	if err != nil {
		t.Fatalf("default mix: %v", err)
	}
	if len(mix) != len(strings.Split(defaultSoakMix, ",")) {
		t.Errorf("default mix: %d routes parsed from %q", len(mix), defaultSoakMix)
	}
	for _, bad := range []string{"latest", "nosuch=1", "latest=1,latest=2", "latest=-1", "latest=0"} {
		if _, err := parseMix(bad, scs); err == nil {
			t.Errorf("parseMix(%q): want an error", bad)
		}
	}
}

// TestMakeSoakSmoke runs `make soak` as documented, in its short form
// (-smoke: a few seconds, memory and schedule shown but not judged), against a fresh
// database, so the reliability run cannot rot unnoticed: the seed, the
// server, the mix, the webhook writer and the report must all work.
func TestMakeSoakSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the service and runs it: not in -short")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "SOAK.md")
	cmd := exec.Command("make", "-s", "soak",
		"SOAK_DATABASE_URL="+dbtest.NewURL(t),
		"SOAKFLAGS=-smoke -duration 6s -interval 2s -probe 500ms -events 3000 -rate 20 -write-every 2s -write-events 2 -delivery-grace 30s -soak-out "+report)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make soak (smoke): %v\n%s", err, out)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("make soak wrote no report: %v\n%s", err, out)
	}
	for _, want := range []string{"## Verdict: PASS", "webhook: every ingested event delivered once signed", "GET /v1/search?q=…"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("soak report lacks %q:\n%s", want, b)
		}
	}
}

// TestGoroutineCheckAfterTheLoad judges the goroutine floor of a run whose
// last third the machine stalled (every probe with requests in flight) by
// the count once the load has ended, and still fails a leak, which keeps
// its goroutines after the load.
func TestGoroutineCheckAfterTheLoad(t *testing.T) {
	d := 6 * time.Second
	run := func(mid, last float64) []soakProbe {
		var ps []soakProbe
		for i := 1; i <= 12; i++ {
			p := soakProbe{t: time.Duration(i) * d / 12, goroutines: mid}
			if p.t >= 2*d/3 {
				p.goroutines = last
			}
			ps = append(ps, p)
		}
		return ps
	}
	stalled := run(64, 79)
	for _, c := range []struct {
		name    string
		probes  []soakProbe
		settled float64
		ok      bool
	}{
		{"steady, not measured after", run(64, 66), -1, true},
		{"stalled last third, not measured after", stalled, -1, false},
		{"stalled last third, settled after the load", stalled, 65, true},
		{"leak: the count stays after the load", stalled, 79, false},
		{"leak within the last third, settled count higher", run(64, 80), 90, false},
	} {
		got := goroutineCheck(c.probes, d, c.settled)
		if got.ok != c.ok {
			t.Errorf("%s: ok = %v, want %v (%s; %s)", c.name, got.ok, c.ok, got.measured, got.limit)
		}
	}
}
