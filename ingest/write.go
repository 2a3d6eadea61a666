package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/search"
	"github.com/cryptointel/cryptointel/wire"
)

// store is the database the ingest writes: db's pool and clock.
type store struct{ *db.DB }

// recordKeys returns the row keys rec writes. Two records writing the same
// key never share a batch (a multi-row upsert cannot touch one row twice).
func recordKeys(rec Record) []string {
	switch rec.Kind {
	case KindEntity:
		return []string{"entity:" + strconv.FormatInt(rec.Entity.ID, 10)}
	case KindRelationship:
		r := rec.Relationship
		return []string{fmt.Sprintf("relationship:%d:%d:%s", r.SourceEntityID, r.TargetEntityID, r.RelationshipType)}
	case KindReference:
		return []string{"reference:" + strconv.FormatInt(rec.Reference.ID, 10)}
	case KindEvent:
		keys := []string{"event:" + strconv.FormatInt(rec.Event.ID, 10)}
		for _, ev := range rec.Event.Evidence {
			keys = append(keys, "evidence:"+strconv.FormatInt(ev.ID, 10))
		}
		return keys
	case KindMarket:
		keys := []string{"market:" + strconv.FormatInt(rec.Market.ID, 10)}
		for _, s := range rec.Market.Subevents {
			keys = append(keys, "subevent:"+strconv.FormatInt(s.ID, 10))
			for _, p := range s.Posts {
				keys = append(keys, "post:"+strconv.FormatInt(p.ID, 10))
			}
		}
		return keys
	}
	return nil
}

// Options tune Ingest.
type Options struct {
	// BatchSize is how many lines one transaction applies. Defaults to 500.
	BatchSize int
	// MaxLineBytes bounds one line; a longer line is reported as bad.
	// Defaults to 8 MiB.
	MaxLineBytes int
	// Progress, when set, is called after each batch is applied with the
	// number of lines read so far. Nil for none.
	Progress func(lines int)
}

// Failure is a bad line: its 1-based number and why it was rejected.
type Failure struct {
	Line   int    `json:"line"`
	Kind   string `json:"kind,omitempty"`
	Reason string `json:"reason"`
}

// maxReportedFailures bounds Summary.Failed so a huge bad file cannot
// exhaust memory; FailedCount still counts every one.
const maxReportedFailures = 1000

// Summary reports what an ingest did.
type Summary struct {
	// Lines is the number of lines read, blank lines included.
	Lines int `json:"lines"`
	// Applied counts, per kind, the lines that inserted or changed data.
	Applied map[string]int `json:"applied"`
	// Unchanged counts good lines that matched what was already stored.
	Unchanged int `json:"unchanged"`
	// EventsChanged counts events inserted or changed (each got a new
	// ingest_seq).
	EventsChanged int `json:"eventsChanged"`
	// FailedCount counts bad lines.
	FailedCount int `json:"failedCount"`
	// Failed lists the bad lines in input order; at most the first 1000.
	Failed []Failure `json:"failed"`
}

func newIngestSummary() *Summary {
	s := &Summary{Applied: make(map[string]int, len(Kinds)), Failed: []Failure{}}
	for _, k := range Kinds {
		s.Applied[k] = 0
	}
	return s
}

func (s *Summary) fail(line int, kind, reason string) {
	s.FailedCount++
	if len(s.Failed) < maxReportedFailures {
		s.Failed = append(s.Failed, Failure{Line: line, Kind: kind, Reason: reason})
	}
}

// sortFailures orders failures by line: batches report reference failures
// before they apply, so they can arrive out of order.
func (s *Summary) sortFailures() {
	sort.SliceStable(s.Failed, func(i, j int) bool { return s.Failed[i].Line < s.Failed[j].Line })
}

type pendingRecord struct {
	line int
	rec  Record
}

// Write reads JSON Lines from r and upserts each record idempotently by id,
// in batches of one transaction each (multi-row upserts, never a statement
// per row). Bad lines — unparsable, invalid, or naming an entity id that
// is neither stored nor defined by an earlier line — are reported in the
// summary and skipped; the good lines are applied. Re-ingesting identical
// lines changes nothing: no row is rewritten and no ingest_seq moves.
//
// Derived data is maintained: entity_names, event_entities with the event's
// time, score, classification and category copied, evidence,
// events.latest_evidence_at and evidence_text, events.ingest_seq (drawn only
// for inserted or changed events) and entities.event_count. A transaction
// that changed events notifies db.PollerChannel.
//
// The error is non-nil only when ingest could not go on (unreadable input,
// database unavailable, cancelled); the summary then covers what was done.
//
// The db.PollerChannel notification is sent when a transaction that inserted or
// changed events commits; its payload is the highest ingest_seq written, in
// decimal.
func Write(ctx context.Context, s *db.DB, r io.Reader, opts Options) (*Summary, error) {
	d := store{s}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 500
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = 8 << 20
	}
	summary := newIngestSummary()
	defer summary.sortFailures()
	// Publications may be dated up to an hour past the server's clock: the
	// later of the injected clock (tests pin it, often in the past) and the
	// wall clock, which are one in production.
	now := time.Now()
	if d.Now != nil && d.Now().After(now) {
		now = d.Now()
	}

	br := bufio.NewReaderSize(r, 64<<10)
	var batch []pendingRecord
	keys := make(map[string]bool)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := d.ingestBatch(ctx, batch, summary)
		batch = batch[:0]
		clear(keys)
		if err == nil && opts.Progress != nil {
			opts.Progress(summary.Lines)
		}
		return err
	}
	for {
		line, tooLong, readErr := readLine(br, opts.MaxLineBytes)
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			if err := flush(); err != nil {
				return summary, err
			}
			return summary, fmt.Errorf("error reading ingest input: %w", readErr)
		}
		if line != nil || tooLong {
			summary.Lines++
			n := summary.Lines
			if n == 1 {
				line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			}
			switch {
			case tooLong:
				summary.fail(n, "", fmt.Sprintf("line longer than %d bytes", opts.MaxLineBytes))
			case len(bytes.TrimSpace(line)) == 0:
				// Blank lines are allowed and skipped.
			default:
				rec, err := ParseLine(line, now)
				if err != nil {
					summary.fail(n, "", cryptointel.ErrorMessage(err))
					break
				}
				recKeys := recordKeys(rec)
				for _, k := range recKeys {
					if keys[k] {
						// The same row twice in one batch: apply what came
						// before first, in order.
						if err := flush(); err != nil {
							return summary, err
						}
						break
					}
				}
				for _, k := range recKeys {
					keys[k] = true
				}
				batch = append(batch, pendingRecord{line: n, rec: rec})
				if len(batch) >= opts.BatchSize {
					if err := flush(); err != nil {
						return summary, err
					}
				}
			}
		}
		if errors.Is(readErr, io.EOF) {
			break
		}
	}
	if err := flush(); err != nil {
		return summary, err
	}
	return summary, nil
}

// readLine reads one line without its end-of-line bytes. A line longer than
// max is consumed and reported as tooLong. At end of input it returns
// io.EOF, with the last line if it had no newline.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > max+2 { // +2 for "\r\n"
				tooLong = true
				buf = nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if len(buf) == 0 && !tooLong {
				return nil, false, err
			}
			if !errors.Is(err, io.EOF) {
				return nil, false, err
			}
		}
		buf = bytes.TrimRight(buf, "\r\n")
		if buf == nil && !tooLong {
			buf = []byte{}
		}
		if tooLong {
			return nil, true, err
		}
		return buf, false, err
	}
}

// ingestBatch applies batch in one transaction. When the transaction fails
// for a reason other than unavailability, it retries line by line so the
// failing lines are reported and the others applied.
func (d store) ingestBatch(ctx context.Context, batch []pendingRecord, summary *Summary) error {
	result, err := d.applyIngestBatch(ctx, batch)
	if err == nil {
		result.report(summary)
		return nil
	}
	// Only a statement the database rejected (a constraint, a value it
	// cannot store) is a line's fault; anything else stops the ingest.
	var pgErr *pgconn.PgError
	if ctx.Err() != nil || db.IsUnavailable(err) || !errors.As(err, &pgErr) {
		return fmt.Errorf("error applying ingest batch (lines %d–%d): %w", batch[0].line, batch[len(batch)-1].line, err)
	}
	if len(batch) == 1 {
		summary.fail(batch[0].line, batch[0].rec.Kind, ingestErrorReason(err))
		return nil
	}
	for i := range batch {
		if err := d.ingestBatch(ctx, batch[i:i+1], summary); err != nil {
			return err
		}
	}
	return nil
}

// ingestErrorReason describes a database error for the line it failed.
func ingestErrorReason(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if pgErr.Detail != "" {
			return fmt.Sprintf("rejected by the database: %s (%s)", pgErr.Message, pgErr.Detail)
		}
		return "rejected by the database: " + pgErr.Message
	}
	return "rejected by the database: " + err.Error()
}

// batchResult is what one batch transaction did.
type batchResult struct {
	batch         []pendingRecord
	bad           map[int]string // batch index → reason
	changed       map[int]bool   // batch index → inserted or changed data
	eventsChanged int
}

func (r *batchResult) report(summary *Summary) {
	for i, p := range r.batch {
		if reason, ok := r.bad[i]; ok {
			summary.fail(p.line, p.rec.Kind, reason)
		} else if r.changed[i] {
			summary.Applied[p.rec.Kind]++
		} else {
			summary.Unchanged++
		}
	}
	summary.EventsChanged += r.eventsChanged
}

// Rows are sent to PostgreSQL as one JSON array per table and expanded
// with jsonb_to_recordset: one statement per table per batch. The rows of
// every table but entity_names are generated from the domain types
// (columns_gen.go); entityNameRow is a name of an entity (its norm is
// computed by the statement).
type entityNameRow struct {
	EntityID int64  `json:"entity_id"`
	Kind     string `json:"kind"`
	Value    string `json:"value"`
}

func jsonParam(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("error encoding ingest rows: %w", err)
	}
	return string(b), nil
}

// applyIngestBatch runs one batch transaction.
func (d store) applyIngestBatch(ctx context.Context, batch []pendingRecord) (*batchResult, error) {
	res := &batchResult{batch: batch, bad: map[int]string{}, changed: map[int]bool{}}
	err := pgx.BeginFunc(ctx, d.Pool, func(tx pgx.Tx) error {
		db.CountStatement(ctx)
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", db.IngestLockID); err != nil {
			return fmt.Errorf("error taking ingest lock: %w", err)
		}
		if err := checkEntityRefs(ctx, tx, res); err != nil {
			return err
		}
		if err := checkChildOwners(ctx, tx, res); err != nil {
			return err
		}
		for _, step := range []func(context.Context, pgx.Tx, *batchResult) error{
			applyEntities, applyRelationships, applyReferences, applyMarkets, applyEvents,
		} {
			if err := step(ctx, tx, res); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// good calls f for every record of kind in the batch that passed the
// reference check.
func (r *batchResult) good(kind string, f func(i int, rec Record)) {
	for i, p := range r.batch {
		if p.rec.Kind != kind {
			continue
		}
		if _, bad := r.bad[i]; bad {
			continue
		}
		f(i, p.rec)
	}
}

// checkEntityRefs marks records naming an entity id that is neither stored
// nor defined by an earlier line of the batch.
func checkEntityRefs(ctx context.Context, tx pgx.Tx, res *batchResult) error {
	definedAt := map[int64]int{} // entity id → first line defining it
	var ids []int64
	for _, p := range res.batch {
		if p.rec.Kind == KindEntity {
			if _, ok := definedAt[p.rec.Entity.ID]; !ok {
				definedAt[p.rec.Entity.ID] = p.line
			}
			continue
		}
		for _, ref := range p.rec.EntityRefs() {
			ids = append(ids, ref.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	db.CountStatement(ctx)
	rows, err := tx.Query(ctx, "SELECT id FROM entities WHERE id = ANY($1)", ids)
	if err != nil {
		return fmt.Errorf("error checking entity ids: %w", err)
	}
	storedIDs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("error checking entity ids: %w", err)
	}
	stored := make(map[int64]bool, len(storedIDs))
	for _, id := range storedIDs {
		stored[id] = true
	}
	for i, p := range res.batch {
		if p.rec.Kind == KindEntity {
			continue
		}
		var unknown []string
		for _, ref := range p.rec.EntityRefs() {
			if stored[ref.ID] {
				continue
			}
			if line, ok := definedAt[ref.ID]; ok && line < p.line {
				continue
			}
			unknown = append(unknown, fmt.Sprintf("%d (%s)", ref.ID, ref.Field))
		}
		if len(unknown) > 0 {
			res.bad[i] = "unknown entity id " + strings.Join(unknown, ", ")
		}
	}
	return nil
}

// checkChildOwners marks event lines listing an evidence id that is stored
// under another event, and market lines listing a sub-event or post id
// stored under another market, unless that other event or market is
// re-ingested in the same batch (its line then no longer lists the id).
// Moving a child silently would leave its old parent's derived data stale;
// ids are global, so a clash is almost always a data error.
func checkChildOwners(ctx context.Context, tx pgx.Tx, res *batchResult) error {
	var eventIDs, evidenceIDs, marketIDs, subIDs, postIDs []int64
	for i, p := range res.batch {
		if _, bad := res.bad[i]; bad {
			continue
		}
		switch p.rec.Kind {
		case KindEvent:
			eventIDs = append(eventIDs, p.rec.Event.ID)
			for _, ev := range p.rec.Event.Evidence {
				evidenceIDs = append(evidenceIDs, ev.ID)
			}
		case KindMarket:
			marketIDs = append(marketIDs, p.rec.Market.ID)
			for _, s := range p.rec.Market.Subevents {
				subIDs = append(subIDs, s.ID)
				for _, post := range s.Posts {
					postIDs = append(postIDs, post.ID)
				}
			}
		}
	}
	type owner struct{ Child, Parent int64 }
	lookup := func(sql string, children, parents []int64) (map[int64]int64, error) {
		if len(children) == 0 {
			return nil, nil
		}
		db.CountStatement(ctx)
		rows, err := tx.Query(ctx, sql, children, parents)
		if err != nil {
			return nil, err
		}
		owners, err := pgx.CollectRows(rows, pgx.RowToStructByPos[owner])
		if err != nil {
			return nil, err
		}
		out := make(map[int64]int64, len(owners))
		for _, o := range owners {
			out[o.Child] = o.Parent
		}
		return out, nil
	}
	evidenceOwner, err := lookup(`SELECT id, event_id FROM evidence WHERE id = ANY($1) AND NOT (event_id = ANY($2))`,
		evidenceIDs, eventIDs)
	if err != nil {
		return fmt.Errorf("error checking evidence ids: %w", err)
	}
	subOwner, err := lookup(`SELECT id, market_id FROM market_subevents WHERE id = ANY($1) AND NOT (market_id = ANY($2))`,
		subIDs, marketIDs)
	if err != nil {
		return fmt.Errorf("error checking market subevent ids: %w", err)
	}
	postOwner, err := lookup(`
		SELECT p.id, s.market_id FROM market_posts p JOIN market_subevents s ON s.id = p.subevent_id
		WHERE p.id = ANY($1) AND NOT (s.market_id = ANY($2))`, postIDs, marketIDs)
	if err != nil {
		return fmt.Errorf("error checking market post ids: %w", err)
	}
	for i, p := range res.batch {
		if _, bad := res.bad[i]; bad {
			continue
		}
		switch p.rec.Kind {
		case KindEvent:
			for _, ev := range p.rec.Event.Evidence {
				if other, ok := evidenceOwner[ev.ID]; ok {
					res.bad[i] = fmt.Sprintf("evidence id %d belongs to event %d", ev.ID, other)
					break
				}
			}
		case KindMarket:
		market:
			for _, s := range p.rec.Market.Subevents {
				if other, ok := subOwner[s.ID]; ok {
					res.bad[i] = fmt.Sprintf("subevent id %d belongs to market %d", s.ID, other)
					break
				}
				for _, post := range s.Posts {
					if other, ok := postOwner[post.ID]; ok {
						res.bad[i] = fmt.Sprintf("post id %d belongs to market %d", post.ID, other)
						break market
					}
				}
			}
		}
	}
	return nil
}

// queryInt64s runs sql and collects the first column of every row.
func queryInt64s(ctx context.Context, tx pgx.Tx, sql string, args ...any) ([]int64, error) {
	db.CountStatement(ctx)
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

func applyEntities(ctx context.Context, tx pgx.Tx, res *batchResult) error {
	var rows []entityRow
	byID := map[int64]int{}
	res.good(KindEntity, func(i int, rec Record) {
		rows = append(rows, entityRowOf(rec.Entity.Entity()))
		byID[rec.Entity.ID] = i
	})
	if len(rows) == 0 {
		return nil
	}
	param, err := jsonParam(rows)
	if err != nil {
		return err
	}
	changedIDs, err := queryInt64s(ctx, tx, `
		INSERT INTO entities AS t (`+entityWritten+`)
		SELECT `+entityValues+`
		FROM jsonb_to_recordset($1::jsonb) AS x(`+entityRecord+`)
		ON CONFLICT (id) DO UPDATE SET `+entitySet+`, updated_at = now()
		WHERE `+entityChanged+`
		RETURNING t.id`, param)
	if err != nil {
		return fmt.Errorf("error upserting entities: %w", err)
	}
	if len(changedIDs) == 0 {
		return nil
	}
	var names []entityNameRow
	for _, id := range changedIDs {
		i := byID[id]
		res.changed[i] = true
		e := res.batch[i].rec.Entity
		names = append(names, entityNameRow{id, "canonical_name", e.CanonicalName}, entityNameRow{id, "display_name", e.DisplayName})
		for _, a := range e.Aliases {
			names = append(names, entityNameRow{id, "alias", a})
		}
	}
	namesParam, err := jsonParam(names)
	if err != nil {
		return err
	}
	db.CountStatement(ctx)
	if _, err := tx.Exec(ctx, `
		DELETE FROM entity_names n
		WHERE n.entity_id = ANY($1)
		  AND NOT EXISTS (
			SELECT 1 FROM jsonb_to_recordset($2::jsonb) AS x(entity_id bigint, kind text, value text)
			WHERE x.entity_id = n.entity_id AND x.kind = n.kind AND x.value = n.value)`, changedIDs, namesParam); err != nil {
		return fmt.Errorf("error removing stale entity names: %w", err)
	}
	db.CountStatement(ctx)
	if _, err := tx.Exec(ctx, `
		INSERT INTO entity_names (entity_id, kind, value, norm)
		SELECT x.entity_id, x.kind, x.value, norm_text(x.value)
		FROM jsonb_to_recordset($1::jsonb) AS x(entity_id bigint, kind text, value text)
		ON CONFLICT DO NOTHING`, namesParam); err != nil {
		return fmt.Errorf("error writing entity names: %w", err)
	}
	return nil
}

func applyRelationships(ctx context.Context, tx pgx.Tx, res *batchResult) error {
	var rows []relationshipRow
	byKey := map[string]int{}
	res.good(KindRelationship, func(i int, rec Record) {
		r := rec.Relationship
		rows = append(rows, relationshipRowOf(&cryptointel.Relationship{
			SourceEntityID: r.SourceEntityID, TargetEntityID: r.TargetEntityID, RelationshipType: r.RelationshipType,
			Status: r.Status, SearchExpand: r.SearchExpand,
		}))
		byKey[recordKeys(rec)[0]] = i
	})
	if len(rows) == 0 {
		return nil
	}
	param, err := jsonParam(rows)
	if err != nil {
		return err
	}
	db.CountStatement(ctx)
	result, err := tx.Query(ctx, relationshipUpsert+" RETURNING t.source_entity_id, t.target_entity_id, t.relationship_type", param)
	if err != nil {
		return fmt.Errorf("error upserting relationships: %w", err)
	}
	var src, dst int64
	var typ string
	_, err = pgx.ForEachRow(result, []any{&src, &dst, &typ}, func() error {
		res.changed[byKey[fmt.Sprintf("relationship:%d:%d:%s", src, dst, typ)]] = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("error upserting relationships: %w", err)
	}
	return nil
}

func applyReferences(ctx context.Context, tx pgx.Tx, res *batchResult) error {
	var rows []referenceRow
	byID := map[int64]int{}
	res.good(KindReference, func(i int, rec Record) {
		r := rec.Reference
		rows = append(rows, referenceRowOf(&cryptointel.Reference{ID: r.ID, EntityID: r.EntityID, ReferenceType: r.ReferenceType, Title: r.Title, URL: r.URL}))
		byID[r.ID] = i
	})
	if len(rows) == 0 {
		return nil
	}
	param, err := jsonParam(rows)
	if err != nil {
		return err
	}
	ids, err := queryInt64s(ctx, tx, referenceUpsert+" RETURNING t.id", param)
	if err != nil {
		return fmt.Errorf("error upserting references: %w", err)
	}
	for _, id := range ids {
		res.changed[byID[id]] = true
	}
	return nil
}

func applyMarkets(ctx context.Context, tx pgx.Tx, res *batchResult) error {
	var (
		markets    []marketRow
		subevents  []marketSubeventRow
		posts      []marketPostRow
		marketIDs  []int64
		subIDs     []int64
		postIDs    []int64
		byMarket   = map[int64]int{}
		subMarket  = map[int64]int64{}
		changedMkt = map[int64]bool{}
	)
	res.good(KindMarket, func(i int, rec Record) {
		m := rec.Market
		byMarket[m.ID] = i
		marketIDs = append(marketIDs, m.ID)
		markets = append(markets, marketRowOf(&cryptointel.Market{
			ID: m.ID, EntityID: m.EntityID, Question: m.Question, URL: m.URL,
			Outcomes: m.Outcomes, Probability: m.Probability, Volume: m.Volume, ClosesAt: m.ClosesAt,
		}))
		for _, s := range m.Subevents {
			subMarket[s.ID] = m.ID
			subIDs = append(subIDs, s.ID)
			subevents = append(subevents, marketSubeventRowOf(&cryptointel.MarketSubevent{
				ID: s.ID, MarketID: m.ID, Label: s.Label, SubeventType: s.Type,
				NormalizedTitle: s.NormalizedTitle, InjectedSummary: s.InjectedSummary,
			}))
			for _, p := range s.Posts {
				postIDs = append(postIDs, p.ID)
				posts = append(posts, marketPostRowOf(&cryptointel.MarketPost{ID: p.ID, SubeventID: s.ID, Content: p.Content, PostedAt: p.Date}))
			}
		}
	})
	if len(markets) == 0 {
		return nil
	}
	param, err := jsonParam(markets)
	if err != nil {
		return err
	}
	ids, err := queryInt64s(ctx, tx, marketUpsert+" RETURNING t.id", param)
	if err != nil {
		return fmt.Errorf("error upserting markets: %w", err)
	}
	for _, id := range ids {
		changedMkt[id] = true
	}

	// Sub-events: drop those the lines no longer list, upsert the rest.
	ids, err = queryInt64s(ctx, tx, `
		DELETE FROM market_subevents WHERE market_id = ANY($1) AND NOT (id = ANY($2)) RETURNING market_id`,
		marketIDs, wire.NonNil(subIDs))
	if err != nil {
		return fmt.Errorf("error removing stale market subevents: %w", err)
	}
	for _, id := range ids {
		changedMkt[id] = true
	}
	if len(subevents) > 0 {
		param, err := jsonParam(subevents)
		if err != nil {
			return err
		}
		ids, err = queryInt64s(ctx, tx, marketSubeventUpsert+" RETURNING t.market_id", param)
		if err != nil {
			return fmt.Errorf("error upserting market subevents: %w", err)
		}
		for _, id := range ids {
			changedMkt[id] = true
		}
	}

	// Posts: the same for the listed sub-events.
	if len(subIDs) > 0 {
		ids, err = queryInt64s(ctx, tx, `
			DELETE FROM market_posts WHERE subevent_id = ANY($1) AND NOT (id = ANY($2)) RETURNING subevent_id`,
			subIDs, wire.NonNil(postIDs))
		if err != nil {
			return fmt.Errorf("error removing stale market posts: %w", err)
		}
		for _, id := range ids {
			changedMkt[subMarket[id]] = true
		}
	}
	if len(posts) > 0 {
		param, err := jsonParam(posts)
		if err != nil {
			return err
		}
		ids, err = queryInt64s(ctx, tx, marketPostUpsert+" RETURNING t.subevent_id", param)
		if err != nil {
			return fmt.Errorf("error upserting market posts: %w", err)
		}
		for _, id := range ids {
			changedMkt[subMarket[id]] = true
		}
	}
	for id := range changedMkt {
		if i, ok := byMarket[id]; ok {
			res.changed[i] = true
		}
	}
	return nil
}

func applyEvents(ctx context.Context, tx pgx.Tx, res *batchResult) error {
	var (
		events      []eventRow
		evidence    []evidenceRow
		links       []eventEntityRow
		eventIDs    []int64
		evidenceIDs []int64
		byEvent     = map[int64]int{}
	)
	res.good(KindEvent, func(i int, rec Record) {
		e := rec.Event
		byEvent[e.ID] = i
		eventIDs = append(eventIDs, e.ID)
		stored := e.Event()
		latest := stored.LatestEvidenceAt
		events = append(events, eventRowOf(stored))
		for _, ev := range e.Evidence {
			evidenceIDs = append(evidenceIDs, ev.ID)
			evidence = append(evidence, evidenceRowOf(ev.Evidence(e.ID)))
		}
		for pos, id := range e.Owners {
			links = append(links, eventEntityRowOf(&cryptointel.EventEntity{
				EventID: e.ID, EntityID: id, Role: cryptointel.RoleOwner, Position: pos,
				LatestEvidenceAt: latest, Significance: e.Significance, ContentType: e.ContentType, Category: e.EventCategory,
			}))
		}
		for pos, id := range e.Participants {
			links = append(links, eventEntityRowOf(&cryptointel.EventEntity{
				EventID: e.ID, EntityID: id, Role: cryptointel.RoleParticipant, Position: pos,
				LatestEvidenceAt: latest, Significance: e.Significance, ContentType: e.ContentType, Category: e.EventCategory,
			}))
		}
	})
	if len(events) == 0 {
		return nil
	}
	param, err := jsonParam(events)
	if err != nil {
		return err
	}

	// Events: ingest_seq is drawn for every row but only stored when the
	// row is inserted or actually changed.
	db.CountStatement(ctx)
	rows, err := tx.Query(ctx, `
		INSERT INTO events AS t (`+eventWritten+`, ingest_seq)
		SELECT `+eventValues+`, nextval('events_ingest_seq')
		FROM jsonb_to_recordset($1::jsonb) AS x(`+eventRecord+`)
		ON CONFLICT (id) DO UPDATE SET `+eventSet+`, ingest_seq = EXCLUDED.ingest_seq, updated_at = now()
		WHERE `+eventChanged+`
		RETURNING t.id, t.ingest_seq`, param)
	if err != nil {
		return fmt.Errorf("error upserting events: %w", err)
	}
	rowChanged := map[int64]bool{}
	var maxSeq int64
	var id, seq int64
	if _, err := pgx.ForEachRow(rows, []any{&id, &seq}, func() error {
		rowChanged[id] = true
		maxSeq = max(maxSeq, seq)
		return nil
	}); err != nil {
		return fmt.Errorf("error upserting events: %w", err)
	}
	childChanged := map[int64]bool{}
	affected := map[int64]bool{} // entities whose event_count may move

	// Evidence.
	ids, err := queryInt64s(ctx, tx, `
		DELETE FROM evidence WHERE event_id = ANY($1) AND NOT (id = ANY($2)) RETURNING event_id`, eventIDs, evidenceIDs)
	if err != nil {
		return fmt.Errorf("error removing stale evidence: %w", err)
	}
	for _, id := range ids {
		childChanged[id] = true
	}
	evParam, err := jsonParam(evidence)
	if err != nil {
		return err
	}
	ids, err = queryInt64s(ctx, tx, evidenceUpsert+" RETURNING t.event_id", evParam)
	if err != nil {
		return fmt.Errorf("error upserting evidence: %w", err)
	}
	for _, id := range ids {
		childChanged[id] = true
	}

	// Entity roles, with the event's time, score, classification and
	// category copied.
	linkParam, err := jsonParam(links)
	if err != nil {
		return err
	}
	collectPairs := func(rows pgx.Rows) error {
		var eventID, entityID int64
		_, err := pgx.ForEachRow(rows, []any{&eventID, &entityID}, func() error {
			childChanged[eventID] = true
			affected[entityID] = true
			return nil
		})
		return err
	}
	db.CountStatement(ctx)
	rows, err = tx.Query(ctx, `
		DELETE FROM event_entities ee
		WHERE ee.event_id = ANY($1)
		  AND NOT EXISTS (
			SELECT 1 FROM jsonb_to_recordset($2::jsonb) AS x(event_id bigint, entity_id bigint, role text)
			WHERE x.event_id = ee.event_id AND x.entity_id = ee.entity_id AND x.role = ee.role)
		RETURNING ee.event_id, ee.entity_id`, eventIDs, linkParam)
	if err == nil {
		err = collectPairs(rows)
	}
	if err != nil {
		return fmt.Errorf("error removing stale event entities: %w", err)
	}
	db.CountStatement(ctx)
	rows, err = tx.Query(ctx, eventEntityUpsert, linkParam)
	if err == nil {
		err = collectPairs(rows)
	}
	if err != nil {
		return fmt.Errorf("error upserting event entities: %w", err)
	}

	// Events whose evidence or roles changed but whose own row did not get
	// a new ingest_seq too.
	var touch []int64
	for id := range childChanged {
		if !rowChanged[id] {
			touch = append(touch, id)
		}
	}
	if len(touch) > 0 {
		seqs, err := queryInt64s(ctx, tx, `
			UPDATE events SET ingest_seq = nextval('events_ingest_seq'), updated_at = now()
			WHERE id = ANY($1) RETURNING ingest_seq`, touch)
		if err != nil {
			return fmt.Errorf("error marking changed events: %w", err)
		}
		for _, s := range seqs {
			maxSeq = max(maxSeq, s)
		}
	}

	if len(affected) > 0 {
		entityIDs := make([]int64, 0, len(affected))
		for id := range affected {
			entityIDs = append(entityIDs, id)
		}
		db.CountStatement(ctx)
		if _, err := tx.Exec(ctx, `
			UPDATE entities e SET event_count = c.n
			FROM (
				SELECT x.id, (SELECT count(DISTINCT ee.event_id) FROM event_entities ee WHERE ee.entity_id = x.id) AS n
				FROM unnest($1::bigint[]) AS x(id)
			) c
			WHERE e.id = c.id AND e.event_count IS DISTINCT FROM c.n`, entityIDs); err != nil {
			return fmt.Errorf("error updating entity event counts: %w", err)
		}
	}

	for id := range rowChanged {
		childChanged[id] = true
	}
	for id := range childChanged {
		if i, ok := byEvent[id]; ok {
			res.changed[i] = true
		}
	}
	res.eventsChanged = len(childChanged)
	if len(childChanged) > 0 {
		// Delivered when the transaction commits.
		db.CountStatement(ctx)
		if _, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", db.PollerChannel, strconv.FormatInt(maxSeq, 10)); err != nil {
			return fmt.Errorf("error notifying %s: %w", db.PollerChannel, err)
		}
	}
	return nil
}

// eventEntityUpsert writes a batch of links ($1, a JSON array of
// eventEntityRow) with their event's word signature (migration 031)
// computed here, for the whole batch in this statement: the links'
// trigger computes it only for a row written without one (migration 032),
// a statement of its own per row. The events were written earlier in the
// same transaction, which holds their rows locked, so the words read are
// the ones this transaction commits; the share lock keeps that true of a
// link whose event this batch did not write. An existing link keeps its
// signature: its event's trigger rewrote it if the words changed.
var eventEntityUpsert = `INSERT INTO event_entities AS t (` + eventEntityWritten + `, sig_a, sig_b)
	SELECT ` + eventEntityValues + `, s.a, s.b
	FROM jsonb_to_recordset($1::jsonb) AS x(` + eventEntityRecord + `)
	LEFT JOIN LATERAL (SELECT e.search FROM events e WHERE e.id = x.event_id FOR SHARE) ev ON true
	LEFT JOIN LATERAL ` + search.SignatureSQL("ev.search") + ` s ON true
	ON CONFLICT (event_id, entity_id, role) DO UPDATE SET ` + eventEntitySet + `
	WHERE ` + eventEntityChanged + `
	RETURNING t.event_id, t.entity_id`
