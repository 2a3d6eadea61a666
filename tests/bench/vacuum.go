package main

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// vacuumTables are the bulk-loaded tables whose visibility map the measured
// reads depend on: the page statements' index-only scans skip the heap only
// on pages the map marks all-visible.
var vacuumTables = []string{"events", "event_entities", "evidence"}

// vacuumInfo records how the run left the benchmark database's visibility
// map and statistics before measuring.
type vacuumInfo struct {
	// Ran is true when this run vacuumed the database; Reason says why and
	// Took how long VACUUM (ANALYZE) took (waiting for the replica apart).
	Ran    bool
	Reason string
	Took   time.Duration
	// Waited is how long the run waited for the replication slots to stop
	// holding back the seed's rows before vacuuming.
	Waited time.Duration
	// Tables are vacuumTables' pages after it.
	Tables []tableVisibility
	// Held are the replication slots that held the horizon back with no
	// replica streaming from them when the run started.
	Held []heldSlot
}

// heldSlot is a replication slot that no replica streams from and whose
// xmin (the hot_standby_feedback its replica last sent) holds the
// primary's horizon back: no row version newer than it can be pruned or
// vacuumed away while the slot stays. The counter rows metering updates on
// every request then keep every version the run writes, and each metering
// walks them (docs/operations/read-replicas.md, "A replica that stops").
// The run's own keys and accounts are new, so within one run the effect is
// small; the report names the slot so that a reader knows, and an operator
// sees what a stopped replica does.
type heldSlot struct {
	Name string
	// Age is how many transactions old its xmin is.
	Age int64
}

// readHeldSlots lists the inactive replication slots holding an xmin, the
// oldest first.
func readHeldSlots(ctx context.Context, conn *pgx.Conn) ([]heldSlot, error) {
	rows, err := conn.Query(ctx, `SELECT slot_name::text, age(xmin)::bigint FROM pg_replication_slots
		WHERE NOT active AND xmin IS NOT NULL ORDER BY 2 DESC, 1`)
	if err != nil {
		return nil, fmt.Errorf("error reading the replication slots: %w", err)
	}
	held, err := pgx.CollectRows(rows, pgx.RowToStructByPos[heldSlot])
	if err != nil {
		return nil, fmt.Errorf("error reading the replication slots: %w", err)
	}
	for _, h := range held {
		log.Printf("warning: replication slot %s streams to no replica and holds the horizon back (its xmin is %d transactions old, and stays while the slot does): the row versions the run writes cannot be pruned (metering's counter rows keep every one); start its replica (make pg-replica-up) or drop the slot (SELECT pg_drop_replication_slot('%s'))", h.Name, h.Age, h.Name)
	}
	return held, nil
}

// tableVisibility is one table's pages and all-visible pages (pg_class's
// relpages and relallvisible) and its last vacuum, manual or automatic.
type tableVisibility struct {
	Name              string
	Pages, AllVisible int64
	LastVacuum        *time.Time
	NoVacuumOnRecord  bool
}

// mostlyInvisible is true when fewer than half of the table's pages are
// all-visible: an index-only scan then reads the heap for most rows.
func (t tableVisibility) mostlyInvisible() bool {
	return t.Pages > 0 && t.AllVisible*2 < t.Pages
}

// percent is the share of all-visible pages.
func (t tableVisibility) percent() float64 {
	if t.Pages == 0 {
		return 100
	}
	return 100 * float64(t.AllVisible) / float64(t.Pages)
}

// ensureVacuumed runs VACUUM (ANALYZE) on the benchmark database when it
// was just seeded, or when a reused seed's bulk-loaded tables were never
// vacuumed or are mostly not all-visible. A production database is kept
// vacuumed by autovacuum; a freshly bulk-loaded one is not yet (autovacuum's
// insert threshold is far away), and its index-only scans would fetch
// every row from the heap. On a reused, vacuumed seed it only reads
// pg_class and pg_stat_user_tables.
//
// VACUUM cannot run in a transaction block: conn is a plain connection and
// Exec sends it alone. A replica with hot_standby_feedback holds the
// primary's horizon back while it replays the seed, and VACUUM cannot then
// mark the seed's pages all-visible, so the run first waits (bounded) for
// the replication slots' xmin to pass the seed.
func ensureVacuumed(ctx context.Context, conn *pgx.Conn, seeded bool) (vacuumInfo, error) {
	held, err := readHeldSlots(ctx, conn)
	if err != nil {
		return vacuumInfo{}, err
	}
	info, err := vacuumIfNeeded(ctx, conn, seeded)
	info.Held = held
	return info, err
}

// vacuumIfNeeded is ensureVacuumed without reading the slots.
func vacuumIfNeeded(ctx context.Context, conn *pgx.Conn, seeded bool) (vacuumInfo, error) {
	before, err := readVisibility(ctx, conn)
	if err != nil {
		return vacuumInfo{}, err
	}
	var reasons []string
	if seeded {
		reasons = append(reasons, "after seeding")
	} else {
		for _, t := range before {
			switch {
			case t.mostlyInvisible():
				reasons = append(reasons, fmt.Sprintf("%s had %d of %d pages all-visible", t.Name, t.AllVisible, t.Pages))
			case t.NoVacuumOnRecord:
				reasons = append(reasons, t.Name+" had no vacuum on record")
			}
		}
	}
	if len(reasons) == 0 {
		return vacuumInfo{Tables: before}, nil
	}
	info := vacuumInfo{Ran: true, Reason: strings.Join(reasons, ", ")}
	if info.Waited, err = waitForSlots(ctx, conn, 3*time.Minute); err != nil {
		return vacuumInfo{}, err
	}
	log.Printf("VACUUM (ANALYZE) of the benchmark database (%s)", info.Reason)
	start := time.Now()
	if _, err := conn.Exec(ctx, `VACUUM (ANALYZE)`); err != nil {
		return vacuumInfo{}, fmt.Errorf("error vacuuming the benchmark database: %w", err)
	}
	info.Took = time.Since(start)
	if info.Tables, err = readVisibility(ctx, conn); err != nil {
		return vacuumInfo{}, err
	}
	log.Printf("VACUUM (ANALYZE) took %s: %s", info.Took.Round(100*time.Millisecond), info.visibility())
	for _, t := range info.Tables {
		if t.mostlyInvisible() {
			log.Printf("warning: %s is still mostly not all-visible after VACUUM: a transaction or replication slot older than the seed holds the horizon back (see pg_stat_activity.backend_xmin, pg_replication_slots.xmin); index-only scans will read the heap", t.Name)
		}
	}
	return info, nil
}

// readVisibility reads vacuumTables' pages, all-visible pages and last
// vacuum. Statistics are lost when the cluster stops uncleanly, so a table
// without a vacuum on record may still be all-visible.
func readVisibility(ctx context.Context, conn *pgx.Conn) ([]tableVisibility, error) {
	rows, err := conn.Query(ctx, `
		SELECT c.relname, c.relpages, c.relallvisible, GREATEST(s.last_vacuum, s.last_autovacuum)
		FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid
		WHERE s.schemaname = current_schema() AND c.relname = ANY($1)
		ORDER BY array_position($1, c.relname::text)`, vacuumTables)
	if err != nil {
		return nil, fmt.Errorf("error reading the benchmark tables' visibility: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tableVisibility, error) {
		var t tableVisibility
		var pages, visible int32
		err := r.Scan(&t.Name, &pages, &visible, &t.LastVacuum)
		t.Pages, t.AllVisible, t.NoVacuumOnRecord = int64(pages), int64(visible), t.LastVacuum == nil
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("error reading the benchmark tables' visibility: %w", err)
	}
	if len(out) != len(vacuumTables) {
		return nil, fmt.Errorf("error reading the benchmark tables' visibility: found %d of the tables %v", len(out), vacuumTables)
	}
	return out, nil
}

// waitForSlots waits until no replication slot's xmin (a replica's
// hot_standby_feedback) is older than a transaction id taken now, i.e.
// until every replica has replayed the seed and stopped holding its rows
// back from VACUUM, or until timeout: then it logs and lets VACUUM do what
// it can. Without replicas it returns at once.
func waitForSlots(ctx context.Context, conn *pgx.Conn, timeout time.Duration) (time.Duration, error) {
	var marker string
	if err := conn.QueryRow(ctx, `SELECT pg_current_xact_id()::xid::text`).Scan(&marker); err != nil {
		return 0, fmt.Errorf("error reading the current transaction id: %w", err)
	}
	start := time.Now()
	logged := false
	for {
		var behind []string
		rows, err := conn.Query(ctx, `SELECT slot_name FROM pg_replication_slots
			WHERE xmin IS NOT NULL AND age(xmin) > age($1::xid) ORDER BY slot_name`, marker)
		if err == nil {
			behind, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		if err != nil {
			return 0, fmt.Errorf("error reading the replication slots: %w", err)
		}
		waited := time.Since(start)
		if len(behind) == 0 {
			if logged {
				log.Printf("replication slots caught up after %s", waited.Round(100*time.Millisecond))
			}
			return waited, nil
		}
		if waited >= timeout {
			log.Printf("warning: replication slots %v still hold the horizon back after %s; vacuuming anyway", behind, waited.Round(time.Second))
			return waited, nil
		}
		if !logged {
			log.Printf("waiting for replication slots %v to pass transaction %s before VACUUM (a replica replaying the seed holds its rows back)", behind, marker)
			logged = true
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// visibility is the report's account of the tables' all-visible pages.
func (v vacuumInfo) visibility() string {
	parts := make([]string, len(v.Tables))
	for i, t := range v.Tables {
		parts[i] = fmt.Sprintf("%s %.0f%%", t.Name, t.percent())
	}
	return "pages all-visible: " + strings.Join(parts, ", ")
}

// reportLine is the clause the reports' "Data" line ends with.
func (v vacuumInfo) reportLine() string {
	return v.vacuumLine() + v.heldLine()
}

// heldLine is the report's warning of held slots, "" without any.
func (v vacuumInfo) heldLine() string {
	if len(v.Held) == 0 {
		return ""
	}
	names := make([]string, len(v.Held))
	for i, h := range v.Held {
		names[i] = fmt.Sprintf("`%s` (xmin %d transactions old)", h.Name, h.Age)
	}
	return "; **replication slots streaming to no replica held the horizon back when the run started: " + strings.Join(names, ", ") +
		"; the row versions the run wrote could not be pruned meanwhile (docs/operations/read-replicas.md)**"
}

// vacuumLine is reportLine without the slots.
func (v vacuumInfo) vacuumLine() string {
	if !v.Ran {
		return "visibility map current, no VACUUM needed (" + v.visibility() + ")"
	}
	wait := ""
	if v.Waited >= time.Second {
		wait = fmt.Sprintf(", after waiting %s for the replica", v.Waited.Round(time.Second))
	}
	return fmt.Sprintf("`VACUUM (ANALYZE)` before measuring (%s; %s%s): %s",
		v.Reason, v.Took.Round(100*time.Millisecond), wait, v.visibility())
}
