package main

import (
	"strings"
	"testing"
	"time"
)

// TestCountOneP50ReadBesideMeteredFloor: a c=1 p50 target names the
// cheapest metered request's p50 of the same run when it was measured,
// and nothing when it was not.
func TestCountOneP50ReadBesideMeteredFloor(t *testing.T) {
	row := func(name string, p50 time.Duration) result {
		return result{name: name + " (computed)", concurrency: 1, requests: 1, lat: []time.Duration{p50}}
	}
	byName := row(byNameRoute, 2230*time.Microsecond)
	var with, without strings.Builder
	writeComputedTargets(&with, reportInput{computed: []result{byName, row(byIDRoute, 950*time.Microsecond)}}, nil)
	writeComputedTargets(&without, reportInput{computed: []result{byName}}, nil)
	want := "| /v1/entities/byName c=1 p50 ≤ 1.00 ms | 2.23 ms (the cheapest metered request, `/v1/entities/byId`: 0.95 ms) | **no** |"
	if !strings.Contains(with.String(), want) {
		t.Errorf("with the byId row: want a line holding %q in\n%s", want, with.String())
	}
	if want := "| /v1/entities/byName c=1 p50 ≤ 1.00 ms | 2.23 ms | **no** |"; !strings.Contains(without.String(), want) {
		t.Errorf("without the byId row: want a line holding %q in\n%s", want, without.String())
	}
	if strings.Contains(with.String(), "/v1/entities/byId c=1") {
		t.Errorf("the byId row is no target of its own:\n%s", with.String())
	}
}

// TestMachineShares: /proc/stat's first line splits into busy, steal and
// total (guest time is inside user), and a row's others and steal shares
// are of every core's time over its period.
func TestMachineShares(t *testing.T) {
	const stat = "cpu  2888271 3060 835037 3809811 75524 7 103006 121680 11 0\ncpu0 1 2 3 4 5 6 7 8 9 0\n"
	m := parseMachineTimes(stat)
	tick := 10 * time.Millisecond
	if want := time.Duration(2888271+3060+835037+7+103006) * tick; m.busy != want {
		t.Errorf("busy: got %v, want %v", m.busy, want)
	}
	if want := time.Duration(121680) * tick; m.steal != want {
		t.Errorf("steal: got %v, want %v", m.steal, want)
	}
	if want := m.busy + m.steal + time.Duration(3809811+75524)*tick; m.total != want {
		t.Errorf("total: got %v, want %v", m.total, want)
	}
	if got := parseMachineTimes("intr 1 2 3\n"); got != (machineTimes{}) {
		t.Errorf("no cpu line: got %+v", got)
	}
	r := result{machine: 12 * time.Second, others: 3 * time.Second, steal: 600 * time.Millisecond}
	if r.othersPct() != 25 || r.stealPct() != 5 {
		t.Errorf("shares: got others %v%%, steal %v%%; want 25, 5", r.othersPct(), r.stealPct())
	}
	// Tick rounding can take a few milliseconds more from the processes
	// than the machine counted busy: never a negative share.
	if r := (result{machine: time.Second, others: -20 * time.Millisecond}); r.othersPct() != 0 {
		t.Errorf("negative others: got %v%%", r.othersPct())
	}
	var b strings.Builder
	writeRow(&b, result{name: "GET /x", concurrency: 1, requests: 1, lat: []time.Duration{time.Millisecond}, machine: 12 * time.Second, others: 3 * time.Second, steal: 600 * time.Millisecond})
	if !strings.HasSuffix(b.String(), "| 25 | 5.0 |\n") {
		t.Errorf("row: got %q, want it to end with the others and steal shares", b.String())
	}
}
