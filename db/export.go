package db

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/wire"
)

// ExportEventFilter selects the events of an export.
type ExportEventFilter struct {
	// Scope is one of the historical export scopes.
	Scope string
	// Params are the job's requested parameters.
	Params exportjob.Params
}

// defaultExportBatch is the batch size of the export streams when the
// caller gives none.
const defaultExportBatch = 5000

// beginExportSnapshot starts the read-only REPEATABLE READ transaction an
// export stream reads every batch in, and returns it with the stream's
// batch size (batchSize, or defaultExportBatch when it is not positive).
func beginExportSnapshot(ctx context.Context, store *DB, batchSize int) (pgx.Tx, int, error) {
	tx, err := store.Pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, 0, fmt.Errorf("error beginning export snapshot: %w", err)
	}
	if batchSize <= 0 {
		batchSize = defaultExportBatch
	}
	return tx, batchSize, nil
}

// StreamExportEvents walks the events selected by filter in ascending
// (latest_evidence_at, id) order with a keyset cursor, batchSize events at a
// time, and calls fn with each batch. Owners, participants and evidence are
// loaded per batch with one statement each (never per row). All batches
// read one REPEATABLE READ snapshot, so the export is consistent even while
// ingest writes. Each batch is a fresh slice that fn may keep (for example
// to encode it on another goroutine while the next batch is read).
func StreamExportEvents(ctx context.Context, store *DB, filter ExportEventFilter, batchSize int, fn func([]wire.Event) error) error {
	tx, batchSize, err := beginExportSnapshot(ctx, store, batchSize)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck

	// The statement is assembled from fixed fragments so that each shape of
	// filter gets its own plan and the keyset condition can use the recency
	// index (an "OR $n IS NULL" form would defeat it).
	var conds []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if p := filter.Params.Since; p != nil {
		conds = append(conds, "e.latest_evidence_at >= "+arg(p.Time))
	}
	if p := filter.Params.Until; p != nil {
		conds = append(conds, "e.latest_evidence_at < "+arg(p.Time))
	}
	if p := filter.Params.Category; p != nil {
		conds = append(conds, "e.category = "+arg(*p))
	}
	if filter.Scope == exportjob.ScopeSignalHistory {
		conds = append(conds, "e.significance IS NOT NULL")
	}
	if filter.Scope == exportjob.ScopeTimelineByOrg {
		ids := filter.Params.OrganizationIDs
		if ids == nil {
			ids = []int64{}
		}
		conds = append(conds, "EXISTS (SELECT 1 FROM event_entities ee WHERE ee.event_id = e.id AND ee.entity_id = ANY("+arg(ids)+"::bigint[]))")
	}
	baseArgs := len(args)
	keyset := fmt.Sprintf("(e.latest_evidence_at, e.id) > ($%d, $%d)", baseArgs+1, baseArgs+2)
	build := func(withKeyset bool, limitArg int) string {
		c := conds
		if withKeyset {
			c = append(append([]string{}, conds...), keyset)
		}
		where := ""
		if len(c) > 0 {
			where = "WHERE " + strings.Join(c, " AND ")
		}
		return `SELECT ` + eventColumns + `
			FROM events e ` + where + `
			ORDER BY e.latest_evidence_at, e.id
			LIMIT $` + strconv.Itoa(limitArg)
	}
	firstQuery := build(false, baseArgs+1)
	nextQuery := build(true, baseArgs+3)

	var batch []wire.Event
	index := make(map[int64]int, batchSize)
	ids := make([]int64, 0, batchSize)
	var afterTS *time.Time
	var afterID int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch = make([]wire.Event, 0, batchSize)
		ids = ids[:0]
		clear(index)
		CountStatement(ctx)
		var rows pgx.Rows
		var err error
		if afterTS == nil {
			rows, err = tx.Query(ctx, firstQuery, append(args[:baseArgs:baseArgs], batchSize)...)
		} else {
			rows, err = tx.Query(ctx, nextQuery, append(args[:baseArgs:baseArgs], *afterTS, afterID, batchSize)...)
		}
		if err != nil {
			return fmt.Errorf("error querying export events: %w", err)
		}
		err = scanEvents(rows, "export events", func(e *cryptointel.Event) {
			var ev wire.Event
			wireEvent(&ev, e)
			index[ev.ID] = len(batch)
			ids = append(ids, ev.ID)
			batch = append(batch, ev)
		})
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		if err := loadExportEntities(ctx, tx, ids, index, batch); err != nil {
			return err
		}
		if filter.Params.IncludeEvidence {
			if err := loadExportEvidence(ctx, tx, ids, index, batch); err != nil {
				return err
			}
		}
		last := batch[len(batch)-1]
		ts := last.LatestEvidenceTimestamp
		afterTS, afterID = &ts, last.ID
		full := len(batch) == batchSize
		if err := fn(batch); err != nil {
			return err
		}
		if !full {
			return nil
		}
	}
}

func loadExportEntities(ctx context.Context, tx pgx.Tx, ids []int64, index map[int64]int, batch []wire.Event) error {
	CountStatement(ctx)
	rows, err := tx.Query(ctx, `
		SELECT `+eventEntityRefColumns+`, `+entityColumns+`
		FROM event_entities ee JOIN entities n ON n.id = ee.entity_id
		WHERE ee.event_id = ANY($1)
		ORDER BY ee.event_id, ee.role, ee.position, n.id`, ids)
	if err != nil {
		return fmt.Errorf("error querying export event entities: %w", err)
	}
	return scan(rows, "export event entities",
		func(r *cryptointel.EventEntityRef, dst []any) []any {
			r.Entity = new(cryptointel.Entity)
			return entityDest(r.Entity, eventEntityRefDest(r, dst))
		},
		func(r *cryptointel.EventEntityRef) {},
		func(r *cryptointel.EventEntityRef) {
			if i, ok := index[r.EventID]; ok {
				var ref wire.EntityRef
				wireEntityRef(&ref, r.Entity)
				cryptointel.AppendByRole(&batch[i].Owners, &batch[i].Participants, r.Role, ref)
			}
		})
}

func loadExportEvidence(ctx context.Context, tx pgx.Tx, ids []int64, index map[int64]int, batch []wire.Event) error {
	CountStatement(ctx)
	rows, err := tx.Query(ctx, `
		SELECT `+evidenceColumns+` FROM evidence v
		WHERE v.event_id = ANY($1)
		ORDER BY v.event_id, v.ts DESC, v.id`, ids)
	if err != nil {
		return fmt.Errorf("error querying export evidence: %w", err)
	}
	return scan(rows, "export evidence", evidenceDest, func(*cryptointel.Evidence) {}, func(v *cryptointel.Evidence) {
		if i, ok := index[v.EventID]; ok {
			var ev wire.Evidence
			wireEvidence(&ev, v)
			batch[i].Evidence = append(batch[i].Evidence, ev)
		}
	})
}

// StreamExportEntities walks every entity in id order with a keyset
// cursor, batchSize at a time, inside one REPEATABLE READ snapshot, and
// calls fn with each batch. Each batch is a fresh slice that fn may keep.
func StreamExportEntities(ctx context.Context, store *DB, batchSize int, fn func([]cryptointel.Entity) error) error {
	tx, batchSize, err := beginExportSnapshot(ctx, store, batchSize)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	var batch []cryptointel.Entity
	var after int64 = -1 << 63
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch = make([]cryptointel.Entity, 0, batchSize)
		CountStatement(ctx)
		rows, err := tx.Query(ctx, `
			SELECT `+entityColumns+`
			FROM entities n WHERE n.id > $1 ORDER BY n.id LIMIT $2`, after, batchSize)
		if err != nil {
			return fmt.Errorf("error querying export entities: %w", err)
		}
		if err := scan(rows, "export entities", entityDest, utcEntity, func(e *cryptointel.Entity) { batch = append(batch, *e) }); err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		after = batch[len(batch)-1].ID
		full := len(batch) == batchSize
		if err := fn(batch); err != nil {
			return err
		}
		if !full {
			return nil
		}
	}
}
