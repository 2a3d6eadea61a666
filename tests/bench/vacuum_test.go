package main

import (
	"strings"
	"testing"
	"time"
)

func TestVacuumReportLine(t *testing.T) {
	tables := []tableVisibility{
		{Name: "events", Pages: 200, AllVisible: 99},
		{Name: "event_entities", Pages: 100, AllVisible: 100},
		{Name: "evidence"},
	}
	if !tables[0].mostlyInvisible() || tables[1].mostlyInvisible() || tables[2].mostlyInvisible() {
		t.Fatalf("mostlyInvisible: want true, false, false for %+v", tables)
	}
	skipped := vacuumInfo{Tables: tables}.reportLine()
	if want := "no VACUUM needed (pages all-visible: events 50%, event_entities 100%, evidence 100%)"; !strings.HasSuffix(skipped, want) {
		t.Errorf("skipped vacuum: got %q, want it to end with %q", skipped, want)
	}
	ran := vacuumInfo{Ran: true, Reason: "after seeding", Took: 41_260 * time.Millisecond, Waited: 12 * time.Second, Tables: tables}.reportLine()
	if want := "`VACUUM (ANALYZE)` before measuring (after seeding; 41.3s, after waiting 12s for the replica): pages all-visible: events 50%"; !strings.HasPrefix(ran, want) {
		t.Errorf("vacuum: got %q, want it to start with %q", ran, want)
	}
	if strings.Contains(ran, "replication slots") {
		t.Errorf("no held slot: got %q", ran)
	}
	held := vacuumInfo{Tables: tables, Held: []heldSlot{{Name: "cryptointel_replica_5433", Age: 24380}}}.reportLine()
	if want := "; **replication slots streaming to no replica held the horizon back when the run started: `cryptointel_replica_5433` (xmin 24380 transactions old);"; !strings.Contains(held, want) {
		t.Errorf("held slot: got %q, want it to hold %q", held, want)
	}
}
