package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// seedInfo describes the benchmark database the run measured.
type seedInfo struct {
	// Key is the marker key: seed version and size.
	Key string
	// SeededAt is when the demo data was generated (its clock anchor).
	SeededAt time.Time
	// Reused is true when the cached seed was used.
	Reused bool
	// Events, Evidence and Entities count the rows.
	Events, Evidence, Entities int64
	// DBSize is the database size in bytes.
	DBSize int64
	// Vacuum says whether the run vacuumed the database before measuring.
	Vacuum vacuumInfo
}

// markerTable records which seed the benchmark database holds. It lives in
// the benchmark database only; the service never reads it.
const markerTable = "bench_seed_marker"

// seedKey names the seed: a hash of the seed generator's sources (its
// version) and the number of events.
func seedKey(o options) (string, error) {
	h := sha256.New()
	for _, f := range []string{"demo/seed.go", "demo/vocab.go", "demo/world.go", "demo/stories.go"} {
		b, err := os.ReadFile(filepath.Join(o.repo, f))
		if err != nil {
			return "", fmt.Errorf("error reading the seed version from %s: %w", f, err)
		}
		h.Write(b)
	}
	return "seed-" + hex.EncodeToString(h.Sum(nil))[:16] + "-events-" + strconv.Itoa(o.events), nil
}

// ensureSeeded migrates the benchmark database and seeds it with
// `seed --demo --events N --force` unless its marker says it already holds
// this seed version and size, generated less than seedMaxAge ago; then it
// vacuums the database when the seed is new or not yet vacuumed
// (ensureVacuumed).
func ensureSeeded(ctx context.Context, o options) (*seedInfo, error) {
	key, err := seedKey(o)
	if err != nil {
		return nil, err
	}
	if err := runBin(ctx, o, "migrate"); err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, o.databaseURL)
	if err != nil {
		return nil, fmt.Errorf("error connecting to the benchmark database: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+markerTable+` (key text PRIMARY KEY, seeded_at timestamptz NOT NULL)`); err != nil {
		return nil, fmt.Errorf("error creating the seed marker table: %w", err)
	}
	info := &seedInfo{Key: key}
	err = conn.QueryRow(ctx, `SELECT seeded_at FROM `+markerTable+` WHERE key = $1`, key).Scan(&info.SeededAt)
	switch {
	case err == nil && time.Since(info.SeededAt) < o.seedMaxAge:
		info.Reused = true
		log.Printf("benchmark database holds %s, seeded %s ago: reusing it", key, time.Since(info.SeededAt).Round(time.Minute))
	case err == nil || errors.Is(err, pgx.ErrNoRows):
		if err == nil {
			log.Printf("cached seed %s is %s old (max %s): seeding again", key, time.Since(info.SeededAt).Round(time.Minute), o.seedMaxAge)
		} else {
			log.Printf("benchmark database lacks %s: seeding %d events (takes minutes)", key, o.events)
		}
		if _, err := conn.Exec(ctx, `DELETE FROM `+markerTable); err != nil {
			return nil, fmt.Errorf("error clearing the seed marker: %w", err)
		}
		info.SeededAt = time.Now()
		if err := runBin(ctx, o, "seed", "--demo", "--events", strconv.Itoa(o.events), "--force"); err != nil {
			return nil, err
		}
		if _, err := conn.Exec(ctx, `INSERT INTO `+markerTable+` (key, seeded_at) VALUES ($1, $2)`, key, info.SeededAt); err != nil {
			return nil, fmt.Errorf("error writing the seed marker: %w", err)
		}
	default:
		return nil, fmt.Errorf("error reading the seed marker: %w", err)
	}
	if info.Vacuum, err = ensureVacuumed(ctx, conn, !info.Reused); err != nil {
		return nil, err
	}
	err = conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM evidence),
		(SELECT count(*) FROM entities), pg_database_size(current_database())`).
		Scan(&info.Events, &info.Evidence, &info.Entities, &info.DBSize)
	if err != nil {
		return nil, fmt.Errorf("error counting the benchmark data: %w", err)
	}
	return info, nil
}

// runBin runs the service binary with args against the benchmark database,
// its output going to ours.
func runBin(ctx context.Context, o options, args ...string) error {
	cmd := exec.CommandContext(ctx, o.bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+o.databaseURL)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("error running %s %v: %w", o.bin, args, err)
	}
	return nil
}
