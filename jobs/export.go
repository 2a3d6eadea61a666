package jobs

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/parquet-go/parquet-go"
	"github.com/riverqueue/river"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/exportstore"
	"github.com/cryptointel/cryptointel/wire"
)

// MsgExportOverDailyVolumeFmt is the error of an export whose file would
// take its account's exports of the day past the daily volume (bytes).
const MsgExportOverDailyVolumeFmt = "Export stopped: its file would take this account's exports created that day (UTC) past the daily volume of %d bytes. Request a narrower export (since, until, category) or retry after 00:00 UTC."

// Defaults of ExportConfig; app's EXPORT_LINK_TTL and EXPORT_STALE_AFTER
// default to them too.
const (
	// DefaultExportLinkTTL is how long a completed export stays
	// downloadable.
	DefaultExportLinkTTL = 24 * time.Hour
	// DefaultExportStaleAfter is how long a running export may go without
	// reporting progress before its attempt is retried.
	DefaultExportStaleAfter = 2 * time.Minute
	// DefaultExportMaxAttempts is how many times an export is tried before
	// it is marked failed.
	DefaultExportMaxAttempts = 5
)

// ExportConfig configures export fulfillment.
type ExportConfig struct {
	// Storage holds the export files. Required.
	Storage exportstore.Storage
	// LinkTTL is how long a completed export stays downloadable; then the
	// job becomes expired and its file is deleted. Defaults to
	// DefaultExportLinkTTL.
	LinkTTL time.Duration
	// BatchSize is how many rows are read per keyset batch. Defaults to
	// 5,000.
	BatchSize int
	// RowGroupRows is how many rows go into one Parquet row group (the
	// writer buffers one row group in memory). Defaults to 20,000.
	RowGroupRows int
	// Timeout bounds one attempt. Defaults to 30 minutes. (An attempt whose
	// worker was killed is retried after StaleAfter, not after Timeout.)
	Timeout time.Duration
	// MaxAttempts is how many times an export is tried before it is marked
	// failed. Defaults to DefaultExportMaxAttempts.
	MaxAttempts int
	// StaleAfter is how long a running export may go without reporting
	// progress (it reports after every batch) before its attempt is taken to
	// belong to a killed worker and is retried. Defaults to
	// DefaultExportStaleAfter.
	StaleAfter time.Duration
	// ExpireInterval is how often the sweep runs that reclaims stalled
	// attempts and expires old exports. Defaults to half of StaleAfter, at
	// most 1 minute.
	ExpireInterval time.Duration
	// WriteBufferSize is the size of the buffer between the encoder and
	// storage. Defaults to 256 KiB.
	WriteBufferSize int
	// MaxBytesPerDay bounds the bytes written by one account's exports
	// created in a UTC day: a job whose file would take its day past it
	// fails, with a message saying so. Zero or negative: no bound.
	MaxBytesPerDay int64
	// Logger is the structured logger. Defaults to slog.Default().
	Logger *slog.Logger
}

func (c *ExportConfig) setDefaults() {
	if c.LinkTTL <= 0 {
		c.LinkTTL = DefaultExportLinkTTL
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 5000
	}
	if c.RowGroupRows <= 0 {
		c.RowGroupRows = 20000
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Minute
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultExportMaxAttempts
	}
	if c.StaleAfter <= 0 {
		c.StaleAfter = DefaultExportStaleAfter
	}
	if c.ExpireInterval <= 0 {
		c.ExpireInterval = min(time.Minute, c.StaleAfter/2)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.WriteBufferSize <= 0 {
		c.WriteBufferSize = 256 << 10
	}
}

// ExportRegistration registers the export worker and the periodic sweep
// that expires old exports. Pass it to NewClient.
func ExportRegistration(store *db.DB, cfg ExportConfig) Registration {
	return func(workers *river.Workers, rc *river.Config) error {
		if cfg.Storage == nil {
			return errors.New("export storage is required")
		}
		w := NewExportWorker(store, cfg)
		if err := river.AddWorkerSafely[exportstore.ExportArgs](workers, w); err != nil {
			return fmt.Errorf("error adding export worker: %w", err)
		}
		if err := river.AddWorkerSafely[exportstore.ExportExpireArgs](workers, &ExportExpireWorker{store: store, cfg: w.cfg}); err != nil {
			return fmt.Errorf("error adding export expiry worker: %w", err)
		}
		rc.PeriodicJobs = append(rc.PeriodicJobs, river.NewPeriodicJob(
			river.PeriodicInterval(w.cfg.ExpireInterval),
			func() (river.JobArgs, *river.InsertOpts) { return exportstore.ExportExpireArgs{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true},
		))
		return nil
	}
}

// EnqueueExport returns the function the export handlers call to insert an
// export's River job inside the transaction that inserts its row.
// maxAttempts defaults to DefaultExportMaxAttempts.
func EnqueueExport(client *river.Client[pgx.Tx], maxAttempts int) func(ctx context.Context, tx pgx.Tx, jobID string) error {
	if maxAttempts <= 0 {
		maxAttempts = DefaultExportMaxAttempts
	}
	return func(ctx context.Context, tx pgx.Tx, jobID string) error {
		_, err := client.InsertTx(ctx, tx, exportstore.ExportArgs{JobID: jobID}, &river.InsertOpts{MaxAttempts: maxAttempts})
		if err != nil {
			return fmt.Errorf("error inserting export river job: %w", err)
		}
		return nil
	}
}

// ExportWorker fulfills export jobs: requested → running → completed (or
// failed). Rows stream from a keyset cursor straight into the encoder and
// a temporary object that is published atomically, so memory stays flat
// and no reader ever sees a partial file. A retried attempt starts over
// into a fresh temporary object.
type ExportWorker struct {
	river.WorkerDefaults[exportstore.ExportArgs]

	store *db.DB
	cfg   ExportConfig
}

// NewExportWorker returns an ExportWorker with cfg's defaults applied.
func NewExportWorker(store *db.DB, cfg ExportConfig) *ExportWorker {
	cfg.setDefaults()
	return &ExportWorker{store: store, cfg: cfg}
}

// Timeout implements river.Worker: exports may run far longer than the
// client's default job timeout. The rescuer honors it too.
func (w *ExportWorker) Timeout(*river.Job[exportstore.ExportArgs]) time.Duration {
	return w.cfg.Timeout
}

// Work implements river.Worker.
func (w *ExportWorker) Work(ctx context.Context, job *river.Job[exportstore.ExportArgs]) error {
	return w.Run(ctx, job.Args.JobID, job.Attempt >= job.MaxAttempts)
}

// Run performs one attempt of export job id. On the last attempt a failure
// marks the job failed with an error message; earlier failures are
// returned so River retries.
func (w *ExportWorker) Run(ctx context.Context, id string, lastAttempt bool) error {
	ej, err := exportstore.ExportJobForWorker(ctx, w.store.Bun, id)
	if cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND {
		return river.JobCancel(err)
	} else if err != nil {
		return err
	}
	started, err := exportstore.StartExportJob(ctx, w.store.Bun, id, w.store.Now())
	if err != nil {
		return err
	} else if !started {
		return nil // already completed, failed or expired
	}
	res, err := w.export(ctx, ej)
	if err != nil {
		var perm *permanentError
		switch {
		case errors.As(err, &perm):
			w.fail(id, perm.msg)
			return river.JobCancel(err)
		case lastAttempt:
			w.cfg.Logger.Error("export failed", slog.String("job_id", id), slog.String("error", err.Error()))
			w.fail(id, exportstore.MsgExportAbandoned)
		}
		return err
	}
	ok, err := exportstore.CompleteExportJob(ctx, w.store.Bun, id, res, w.store.Now())
	if err != nil {
		return err
	}
	if !ok {
		w.cfg.Logger.Warn("export finished after job left running state", slog.String("job_id", id))
	}
	return nil
}

func (w *ExportWorker) fail(id, msg string) {
	// The attempt's context may be cancelled; record the failure anyway.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := exportstore.FailExportJob(ctx, w.store.Bun, id, msg, w.store.Now()); err != nil {
		w.cfg.Logger.Error("error marking export failed", slog.String("job_id", id), slog.String("error", err.Error()))
	}
}

// addBytes records what an attempt wrote (and the write past the day's
// volume that stopped it) against its job.
func (w *ExportWorker) addBytes(id string, c *countingWriter) {
	// The attempt's context may be cancelled; record the bytes anyway.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := exportstore.AddExportBytes(ctx, w.store.Bun, id, c.n+c.refused); err != nil {
		w.cfg.Logger.Error("error recording export bytes", slog.String("job_id", id), slog.String("error", err.Error()))
	}
}

type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

func (w *ExportWorker) export(ctx context.Context, ej *exportjob.Job) (exportstore.ExportResult, error) {
	var params exportjob.Params
	if err := json.Unmarshal(ej.RequestedParams, &params); err != nil {
		return exportstore.ExportResult{}, &permanentError{msg: "Export parameters could not be read."}
	}
	valid := false
	for _, s := range exportjob.Scopes {
		valid = valid || s == ej.Scope
	}
	if !valid {
		return exportstore.ExportResult{}, &permanentError{msg: fmt.Sprintf("Unsupported export scope %q.", ej.Scope)}
	}
	key := exportstore.Key(ej.ID, ej.Format)
	tmp, err := w.cfg.Storage.Create(ctx, key)
	if err != nil {
		return exportstore.ExportResult{}, err
	}
	published := false
	defer func() {
		if !published {
			tmp.Abort() //nolint:errcheck
		}
	}()

	hash := sha256.New()
	counter := &countingWriter{w: io.MultiWriter(tmp, hash)}
	if w.cfg.MaxBytesPerDay > 0 {
		used, err := exportstore.ExportBytesOfDay(ctx, w.store.Bun, ej.AccountID, ej.CreatedAt)
		if err != nil {
			return exportstore.ExportResult{}, err
		}
		counter.limit = max(w.cfg.MaxBytesPerDay-used, 1)
	}
	// What this attempt wrote counts against the account's day whatever
	// its outcome: failed and retried attempts too.
	defer w.addBytes(ej.ID, counter)
	bw := bufio.NewWriterSize(counter, w.cfg.WriteBufferSize)
	enc, err := newExportEncoder(ej.Format, ej.Scope, bw, params.IncludeEvidence, w.cfg.RowGroupRows)
	if err != nil {
		return exportstore.ExportResult{}, err
	}
	rows, err := w.pipeline(ctx, ej, params, enc)
	if err == nil {
		if err = enc.close(); err != nil {
			err = fmt.Errorf("error finishing export encoding: %w", err)
		}
	}
	if err == nil {
		if err = bw.Flush(); err != nil {
			err = fmt.Errorf("error writing export file: %w", err)
		}
	}
	if counter.over {
		return exportstore.ExportResult{}, &permanentError{msg: fmt.Sprintf(MsgExportOverDailyVolumeFmt, w.cfg.MaxBytesPerDay)}
	}
	if err != nil {
		return exportstore.ExportResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return exportstore.ExportResult{}, err
	}
	if err := tmp.Publish(ctx); err != nil {
		return exportstore.ExportResult{}, err
	}
	published = true
	return exportstore.ExportResult{
		StorageKey: key,
		RowCount:   rows,
		ByteSize:   counter.n,
		SHA256:     hex.EncodeToString(hash.Sum(nil)),
		ExpiresAt:  w.store.Now().Add(w.cfg.LinkTTL),
	}, nil
}

// exportBatch is one batch on its way from the reader to the encoder.
type exportBatch struct {
	events   []wire.Event
	entities []cryptointel.Entity
}

// pipeline streams ej's rows into enc: the reader (one snapshot
// transaction) fetches the next batch while the encoder writes the current
// one, at most two batches in flight, so memory stays flat. It returns the
// number of rows written.
func (w *ExportWorker) pipeline(ctx context.Context, ej *exportjob.Job, params exportjob.Params, enc exportEncoder) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan exportBatch, 1)
	var rows int64
	var encErr error
	encoded := make(chan struct{})
	go func() {
		defer close(encoded)
		for b := range ch {
			if encErr != nil {
				continue // drain
			}
			var err error
			n := len(b.events) + len(b.entities)
			if b.entities != nil {
				err = enc.writeEntities(b.entities)
			} else {
				err = enc.writeEvents(b.events)
			}
			if err != nil {
				encErr = fmt.Errorf("error encoding export rows: %w", err)
			} else {
				rows += int64(n)
				encErr = exportstore.ReportExportProgress(ctx, w.store.Bun, ej.ID, rows, w.store.Now())
			}
			if encErr != nil {
				cancel()
			}
		}
	}()
	send := func(b exportBatch) error {
		select {
		case ch <- b:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var err error
	if ej.Scope == exportjob.ScopeOrganizationsRegistry {
		err = db.StreamExportEntities(ctx, w.store, w.cfg.BatchSize, func(batch []cryptointel.Entity) error {
			return send(exportBatch{entities: batch})
		})
	} else {
		filter := db.ExportEventFilter{Scope: ej.Scope, Params: params}
		err = db.StreamExportEvents(ctx, w.store, filter, w.cfg.BatchSize, func(batch []wire.Event) error {
			return send(exportBatch{events: batch})
		})
	}
	close(ch)
	<-encoded
	if encErr != nil {
		return 0, encErr
	}
	return rows, err
}

// countingWriter counts what passes through it; with a limit, a write
// that would pass it fails (over is then set) and writes nothing.
type countingWriter struct {
	w       io.Writer
	n       int64
	limit   int64
	over    bool
	refused int64 // the bytes of the write refused past limit
}

// errOverDailyVolume fails a write past the account's daily export volume.
var errOverDailyVolume = errors.New("export over the account's daily volume")

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.limit > 0 && c.n+int64(len(p)) > c.limit {
		c.over = true
		c.refused = int64(len(p))
		return 0, errOverDailyVolume
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ExportExpireWorker is the periodic sweep that moves completed exports
// past their link lifetime to expired and deletes their files, fails
// exports whose River job was discarded, and removes what killed uploads
// left in storage.
type ExportExpireWorker struct {
	river.WorkerDefaults[exportstore.ExportExpireArgs]

	store *db.DB
	cfg   ExportConfig
}

// Work implements river.Worker. It reclaims attempts whose worker stopped
// reporting progress (killed), fails exports River gave up on without the
// worker recording it (a worker killed in its last attempt), expires old
// exports, and sweeps storage of the leftovers (temporary files,
// incomplete multipart uploads) of uploads started more than an attempt's
// Timeout ago, which no live attempt can own.
func (w *ExportExpireWorker) Work(ctx context.Context, _ *river.Job[exportstore.ExportExpireArgs]) error {
	if n, err := exportstore.ReclaimStalledExportJobs(ctx, w.store.Bun, w.store.Now().Add(-w.cfg.StaleAfter)); err != nil {
		return err
	} else if n > 0 {
		w.cfg.Logger.Warn("reclaimed stalled export attempts", slog.Int("count", n))
	}
	if _, err := exportstore.FailAbandonedExportJobs(ctx, w.store.Bun, w.store.Now()); err != nil {
		return err
	}
	if _, err := ExpireExports(ctx, w.store, w.cfg.Storage); err != nil {
		return err
	}
	// Storage stamps leftovers with the wall clock, not the store's.
	if n, err := w.cfg.Storage.Sweep(ctx, time.Now().Add(-w.cfg.Timeout)); err != nil {
		return err
	} else if n > 0 {
		w.cfg.Logger.Warn("removed leftovers of interrupted export uploads", slog.Int("count", n))
	}
	return nil
}

// ExpireExports marks every completed export whose link has expired as
// expired and deletes its file. It returns how many jobs expired.
func ExpireExports(ctx context.Context, store *db.DB, storage exportstore.Storage) (int, error) {
	expired, err := exportstore.ExpireExportJobs(ctx, store.Bun, store.Now())
	if err != nil {
		return 0, err
	}
	for _, e := range expired {
		if e.StorageKey == nil {
			continue
		}
		if err := storage.Delete(ctx, *e.StorageKey); err != nil {
			return len(expired), err
		}
	}
	return len(expired), nil
}

// Encoders.
//
// jsonl: one JSON object per line. Events carry the canonical fields and
// the legacy aliases (section 2.1); evidence/posts appear only when
// includeEvidence was requested. Entities carry id, canonicalName,
// displayName, entityType, status and aliases.
//
// csv: a header row, then one row per event or entity. Lists are
// flattened: bullets joined by " | "; owners and participants as
// "id:label" joined by "|"; evidence as "id:url" joined by "|" (empty
// unless includeEvidence); entity aliases joined by "|". significance is
// empty for a radar-only event. Timestamps are ISO 8601 UTC with
// milliseconds.
//
// parquet: a typed schema: ids INT64, timestamps TIMESTAMP(MILLIS, UTC),
// significance an optional DOUBLE, bullets/aliases LIST<STRING>, owners,
// participants and evidence LIST<STRUCT>; Snappy-compressed, one row group
// per RowGroupRows rows.

type exportEncoder interface {
	writeEvents([]wire.Event) error
	writeEntities([]cryptointel.Entity) error
	close() error
}

func newExportEncoder(format, scope string, w io.Writer, includeEvidence bool, rowGroupRows int) (exportEncoder, error) {
	entities := scope == exportjob.ScopeOrganizationsRegistry
	switch format {
	case exportjob.FormatJSONL:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return &jsonlEncoder{w: w, enc: enc, includeEvidence: includeEvidence}, nil
	case exportjob.FormatCSV:
		cw := csv.NewWriter(w)
		header := wire.EventCSVHeader
		if entities {
			header = csvEntityHeader
		}
		if err := cw.Write(header); err != nil {
			return nil, err
		}
		return &csvEncoder{w: cw}, nil
	case exportjob.FormatParquet:
		opts := []parquet.WriterOption{parquet.Compression(&parquet.Snappy)}
		if entities {
			return &parquetEntityEncoder{w: parquet.NewGenericWriter[ParquetEntity](w, opts...), rowGroupRows: rowGroupRows}, nil
		}
		return &parquetEventEncoder{w: parquet.NewGenericWriter[wire.Event](w, append(opts, parquetEventSchema)...), rowGroupRows: rowGroupRows}, nil
	}
	return nil, &permanentError{msg: fmt.Sprintf("Unsupported export format %q.", format)}
}

// JSONEntity is one line of a jsonl organizations.registry export.
type JSONEntity struct {
	ID            int64    `json:"id"`
	CanonicalName string   `json:"canonicalName"`
	DisplayName   string   `json:"displayName"`
	EntityType    string   `json:"entityType"`
	Status        string   `json:"status"`
	Aliases       []string `json:"aliases"`
}

// jsonlEncoder writes one JSON object a line: events in the wire.JSONL
// encoding, entities as JSONEntity.
type jsonlEncoder struct {
	w               io.Writer
	enc             *json.Encoder
	buf             []byte
	includeEvidence bool
}

func (e *jsonlEncoder) writeEvents(batch []wire.Event) error {
	for i := range batch {
		var err error
		if e.buf, err = batch[i].AppendJSON(e.buf[:0], &wire.JSONL, e.includeEvidence); err != nil {
			return err
		}
		e.buf = append(e.buf, '\n')
		if _, err := e.w.Write(e.buf); err != nil {
			return err
		}
	}
	return nil
}

func (e *jsonlEncoder) writeEntities(batch []cryptointel.Entity) error {
	for i := range batch {
		en := &batch[i]
		if err := e.enc.Encode(JSONEntity{
			ID: en.ID, CanonicalName: en.CanonicalName, DisplayName: en.DisplayName,
			EntityType: en.EntityType, Status: en.Status, Aliases: wire.NonNil(en.Aliases),
		}); err != nil {
			return err
		}
	}
	return nil
}

func (e *jsonlEncoder) close() error { return nil }

var csvEntityHeader = []string{"id", "canonicalName", "displayName", "entityType", "status", "aliases"}

type csvEncoder struct {
	w   *csv.Writer
	rec []string
	sb  strings.Builder
}

func (e *csvEncoder) writeEvents(batch []wire.Event) error {
	for i := range batch {
		e.rec = batch[i].AppendCSV(e.rec[:0], &e.sb)
		if err := e.w.Write(e.rec); err != nil {
			return err
		}
	}
	e.w.Flush()
	return e.w.Error()
}

func (e *csvEncoder) writeEntities(batch []cryptointel.Entity) error {
	for i := range batch {
		en := &batch[i]
		e.rec = append(e.rec[:0], strconv.FormatInt(en.ID, 10), en.CanonicalName, en.DisplayName, en.EntityType, en.Status, strings.Join(en.Aliases, "|"))
		if err := e.w.Write(e.rec); err != nil {
			return err
		}
	}
	e.w.Flush()
	return e.w.Error()
}

func (e *csvEncoder) close() error {
	e.w.Flush()
	return e.w.Error()
}

// ParquetEntity is the row type (and schema) of a Parquet
// organizations.registry export.
type ParquetEntity struct {
	ID            int64    `parquet:"id"`
	CanonicalName string   `parquet:"canonicalName"`
	DisplayName   string   `parquet:"displayName"`
	EntityType    string   `parquet:"entityType,dict"`
	Status        string   `parquet:"status,dict"`
	Aliases       []string `parquet:"aliases,list"`
}

// parquetEventSchema is the schema of a Parquet event export: the columns
// of wire.Event (the wire tables), under the schema name exports have
// always carried.
var parquetEventSchema = parquet.NewSchema("ParquetEvent", parquet.SchemaOf(new(wire.Event)))

type parquetEventEncoder struct {
	w            *parquet.GenericWriter[wire.Event]
	rowGroupRows int
	pending      int
}

func (e *parquetEventEncoder) writeEvents(batch []wire.Event) error {
	if _, err := e.w.Write(batch); err != nil {
		return err
	}
	e.pending += len(batch)
	if e.pending >= e.rowGroupRows {
		e.pending = 0
		return e.w.Flush()
	}
	return nil
}

func (e *parquetEventEncoder) writeEntities([]cryptointel.Entity) error {
	return errors.New("parquet event encoder cannot write entities")
}

func (e *parquetEventEncoder) close() error { return e.w.Close() }

type parquetEntityEncoder struct {
	w            *parquet.GenericWriter[ParquetEntity]
	rows         []ParquetEntity
	rowGroupRows int
	pending      int
}

func (e *parquetEntityEncoder) writeEvents([]wire.Event) error {
	return errors.New("parquet entity encoder cannot write events")
}

func (e *parquetEntityEncoder) writeEntities(batch []cryptointel.Entity) error {
	e.rows = e.rows[:0]
	for i := range batch {
		en := &batch[i]
		e.rows = append(e.rows, ParquetEntity{
			ID: en.ID, CanonicalName: en.CanonicalName, DisplayName: en.DisplayName,
			EntityType: en.EntityType, Status: en.Status, Aliases: en.Aliases,
		})
	}
	if _, err := e.w.Write(e.rows); err != nil {
		return err
	}
	clear(e.rows)
	e.pending += len(batch)
	if e.pending >= e.rowGroupRows {
		e.pending = 0
		return e.w.Flush()
	}
	return nil
}

func (e *parquetEntityEncoder) close() error { return e.w.Close() }
