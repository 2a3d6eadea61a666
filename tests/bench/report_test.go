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

// TestPairedRoundsSumAndRatioPerRound: a row measured in rounds alternated
// with its peer's is the sum of its rounds (requests over time, every
// latency, CPU), and the floor line gives each round's ratio beside the
// whole one.
func TestPairedRoundsSumAndRatioPerRound(t *testing.T) {
	round := func(name string, requests int, lat ...time.Duration) result {
		return result{name: name, concurrency: 8, requests: requests, elapsed: time.Second, lat: lat,
			cpu: time.Duration(requests) * time.Millisecond, rssPeak: int64(requests)}
	}
	ours := mergeRounds([]result{
		round(latestRoute+" (computed)", 1100, 3*time.Millisecond, time.Millisecond),
		round(latestRoute+" (computed)", 900, 2*time.Millisecond),
	})
	floor := mergeRounds([]result{round("floor: GET /v1/latest?limit=25", 1000), round("floor: GET /v1/latest?limit=25", 1000)})
	if ours.requests != 2000 || ours.elapsed != 2*time.Second || ours.rps() != 1000 || ours.cpuPerReq() != time.Millisecond || ours.rssPeak != 1100 {
		t.Fatalf("merged row: %d requests in %s, %.0f req/s, %s CPU a request, RSS %d", ours.requests, ours.elapsed, ours.rps(), ours.cpuPerReq(), ours.rssPeak)
	}
	if got := ours.lat; len(got) != 3 || got[0] != time.Millisecond || got[2] != 3*time.Millisecond || ours.pct(0.5) != 2*time.Millisecond {
		t.Fatalf("merged latencies %v, p50 %s", got, ours.pct(0.5))
	}
	var b strings.Builder
	writeComputedTargets(&b, reportInput{computed: []result{ours}}, map[int]result{8: floor})
	if want := "1.00 × (service 1000 ÷ floor 1000 req/s; rounds 1.10, 0.90)"; !strings.Contains(b.String(), want) {
		t.Fatalf("the floor line does not read %q:\n%s", want, b.String())
	}
	if once := (result{requests: 5, elapsed: time.Second}); roundsClause(once, floor) != "" || once.roundsNote() != "" {
		t.Fatal("a row measured at once has no rounds")
	}
}

// TestLatestTargetsReadTheLatestRow: the as-shipped /v1/latest targets read
// that route's row, not a later row whose name begins with it.
func TestLatestTargetsReadTheLatestRow(t *testing.T) {
	row := func(name string, requests int) result {
		return result{name: name, concurrency: 8, requests: requests, elapsed: time.Second}
	}
	out := renderReport(reportInput{
		rows:  []result{row(latestRoute, 1300), row(latestRoute+"&legacy=false", 900)},
		floor: []result{row("floor: GET /v1/latest?limit=25", 1000)},
	})
	if want := "1.30 × (service 1300 ÷ floor 1000 req/s)"; !strings.Contains(out, want) {
		t.Fatalf("the floor line does not read %q:\n%s", want, out)
	}
}

// A backend that exits during a row (an autovacuum worker, a pool's
// connection) is missed for the row, never subtracted; one that starts
// counts from zero.
func TestBackendsCPUSinceMissesExitedBackends(t *testing.T) {
	before := map[int]time.Duration{10: 5 * time.Second, 11: 22 * time.Second, 12: time.Second}
	after := map[int]time.Duration{10: 6 * time.Second, 12: 3 * time.Second, 13: 500 * time.Millisecond}
	if got := cpuSince(before, after); got != 3500*time.Millisecond {
		t.Fatalf("cpuSince = %s, want 3.5s", got)
	}
	if got := cpuSince(before, map[int]time.Duration{}); got != 0 {
		t.Fatalf("cpuSince with every backend gone = %s, want 0", got)
	}
}
