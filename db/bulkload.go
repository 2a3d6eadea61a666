package db

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// BulkLoad is one transaction that loads a large dataset into empty domain
// tables with COPY (the demo seed uses it). It holds the ingest lock, so no
// ingest batch interleaves, and the event tables' secondary indexes are
// dropped while it copies: RebuildIndexes builds them once after the load,
// which is far cheaper than maintaining them row by row (the GIN search
// index above all). The definitions are read from the catalog, so the
// migrations stay their only source; DDL is transactional, so a load that
// is rolled back restores them.
type BulkLoad struct {
	store   *DB
	tx      pgx.Tx
	indexes []bulkIndex
}

// bulkIndex is a dropped secondary index and its definition.
type bulkIndex struct{ Name, Def string }

// BeginBulkLoad starts a bulk load. When any entity or event is stored it
// returns a nil *BulkLoad (nothing to do) unless force is set, in which case
// it clears the domain data (entities, events and everything hanging off
// them) first. The caller must call Rollback (a no-op after Commit).
func (d *DB) BeginBulkLoad(ctx context.Context, force bool) (*BulkLoad, error) {
	tx, err := d.Pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("error starting seed transaction: %w", err)
	}
	l := &BulkLoad{store: d, tx: tx}
	ok := false
	defer func() {
		if !ok {
			l.Rollback(ctx)
		}
	}()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", IngestLockID); err != nil {
		return nil, fmt.Errorf("error taking ingest lock: %w", err)
	}
	var hasData bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM entities) OR EXISTS (SELECT 1 FROM events)").Scan(&hasData); err != nil {
		return nil, fmt.Errorf("error checking for existing data: %w", err)
	}
	if hasData {
		if !force {
			return nil, nil
		}
		if _, err := tx.Exec(ctx, "TRUNCATE entities, events CASCADE"); err != nil {
			return nil, fmt.Errorf("error clearing existing data: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, "SET LOCAL maintenance_work_mem = '256MB'"); err != nil {
		return nil, fmt.Errorf("error configuring seed transaction: %w", err)
	}
	rows, err := tx.Query(ctx, `
		SELECT i.indexname, i.indexdef FROM pg_indexes i
		WHERE i.schemaname = current_schema() AND i.tablename IN ('events', 'evidence', 'event_entities')
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)
		ORDER BY i.indexname`)
	if err != nil {
		return nil, fmt.Errorf("error reading event indexes: %w", err)
	}
	l.indexes, err = pgx.CollectRows(rows, pgx.RowToStructByPos[bulkIndex])
	if err != nil {
		return nil, fmt.Errorf("error reading event indexes: %w", err)
	}
	for _, ix := range l.indexes {
		if _, err := tx.Exec(ctx, "DROP INDEX "+pgx.Identifier{ix.Name}.Sanitize()); err != nil {
			return nil, fmt.Errorf("error dropping index %s for the load: %w", ix.Name, err)
		}
	}
	// The search statistics are counted once after the load
	// (RebuildIndexes): upserting every chunk's terms in one transaction
	// piles up row versions of the same few thousand rows.
	if _, err := tx.Exec(ctx, "ALTER TABLE events DISABLE TRIGGER "+searchStatsInsertTrigger); err != nil {
		return nil, fmt.Errorf("error pausing search statistics for the load: %w", err)
	}
	ok = true
	return l, nil
}

// searchStatsInsertTrigger keeps search_terms and search_corpus current on
// insert (migration 009).
const searchStatsInsertTrigger = "events_search_stats_insert_trg"

// Copy writes rows into table's columns cols with COPY and returns how many
// it wrote.
func (l *BulkLoad) Copy(ctx context.Context, table string, cols []string, rows [][]any) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	n, err := l.tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
	if err != nil {
		return 0, fmt.Errorf("error copying %s: %w", table, err)
	}
	return int(n), nil
}

// WriteEntityNames stores the names entities answer to (kind is
// canonical_name, display_name or alias), normalized as ingest does.
func (l *BulkLoad) WriteEntityNames(ctx context.Context, ids []int64, kinds, values []string) error {
	if _, err := l.tx.Exec(ctx, `
		INSERT INTO entity_names (entity_id, kind, value, norm)
		SELECT x.id, x.kind, x.value, norm_text(x.value)
		FROM unnest($1::bigint[], $2::text[], $3::text[]) AS x(id, kind, value)
		ON CONFLICT DO NOTHING`, ids, kinds, values); err != nil {
		return fmt.Errorf("error writing entity names: %w", err)
	}
	return nil
}

// RebuildIndexes builds the indexes BeginBulkLoad dropped and counts the
// search statistics of every event stored.
func (l *BulkLoad) RebuildIndexes(ctx context.Context) error {
	for _, ix := range l.indexes {
		if _, err := l.tx.Exec(ctx, ix.Def); err != nil {
			return fmt.Errorf("error rebuilding index %s: %w", ix.Name, err)
		}
	}
	if _, err := l.tx.Exec(ctx, `
		TRUNCATE search_terms;
		INSERT INTO search_terms (term, df) SELECT word, ndoc FROM ts_stat('SELECT search FROM events');
		UPDATE search_corpus c SET docs = s.n, lexemes = s.l, first_at = s.lo, last_at = s.hi
		FROM (SELECT count(*) AS n, coalesce(sum(length(search)), 0) AS l,
		             min(latest_evidence_at) AS lo, max(latest_evidence_at) AS hi FROM events) s
		WHERE c.id;
		ALTER TABLE events ENABLE TRIGGER `+searchStatsInsertTrigger); err != nil {
		return fmt.Errorf("error counting search statistics: %w", err)
	}
	return nil
}

// SetEventCounts sets entities.event_count of each entity ids[i] to
// counts[i].
func (l *BulkLoad) SetEventCounts(ctx context.Context, ids, counts []int64) error {
	if _, err := l.tx.Exec(ctx, `
		UPDATE entities e SET event_count = x.n
		FROM unnest($1::bigint[], $2::bigint[]) AS x(id, n) WHERE e.id = x.id`, ids, counts); err != nil {
		return fmt.Errorf("error writing entity event counts: %w", err)
	}
	return nil
}

// Commit commits the load and refreshes the planner statistics of the
// loaded tables.
func (l *BulkLoad) Commit(ctx context.Context) error {
	if err := l.tx.Commit(ctx); err != nil {
		return fmt.Errorf("error committing seed: %w", err)
	}
	if _, err := l.store.Pool.Exec(ctx, `ANALYZE entities, entity_names, relationships, entity_references, events,
		event_entities, evidence, markets, market_subevents, market_posts`); err != nil {
		return fmt.Errorf("error analyzing seeded tables: %w", err)
	}
	return nil
}

// Rollback abandons the load unless it was committed, restoring the
// dropped indexes.
func (l *BulkLoad) Rollback(ctx context.Context) {
	l.tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck
}
