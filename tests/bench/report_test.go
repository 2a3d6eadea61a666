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
