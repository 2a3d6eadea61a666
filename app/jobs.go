package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/cryptointel/cryptointel/exportstore"
	"github.com/cryptointel/cryptointel/jobs"
	"github.com/cryptointel/cryptointel/observe"
	"github.com/cryptointel/cryptointel/rest"
	"github.com/cryptointel/cryptointel/webhook"
)

// jobRunner holds the one River client of the process, built in New with
// every job kind's registration and started by StartJobs.
type jobRunner struct {
	client   *river.Client[pgx.Tx]
	webhooks *rest.WebhookHandlers
	export   *rest.ExportHandlers

	once     sync.Once
	startErr error
}

// initJobs builds the River client (started later by StartJobs; inserting
// jobs works before) and the webhook management handlers.
func (a *App) initJobs() error {
	allow, err := webhook.ParseAllowList(a.Config.WebhookAllowCIDRs)
	if err != nil {
		return fmt.Errorf("error parsing webhook allowlist: %w", err)
	}
	guard := &webhook.Guard{Allow: allow, LoopbackHTTP: a.Config.Demo}
	if a.Config.Demo {
		a.Logger.Warn("demo mode: webhooks may be registered for http:// receivers on loopback (127.0.0.1, ::1, localhost) and delivered there; never outside demo mode")
	}
	webhookCfg := jobs.WebhookConfig{
		Store:        a.DB,
		Logger:       a.Logger,
		TimeScale:    a.Config.WebhookTimeScale,
		PollInterval: a.Config.WebhookPollInterval,
		Guard:        guard,
	}
	tlsCfg := a.Config.WebhookTLSConfig
	if tlsCfg == nil && a.Config.WebhookCAFile != "" {
		pem, err := os.ReadFile(a.Config.WebhookCAFile)
		if err != nil {
			return fmt.Errorf("error reading webhook CA file: %w", err)
		}
		roots, err := x509.SystemCertPool()
		if err != nil || roots == nil {
			roots = x509.NewCertPool()
		}
		if !roots.AppendCertsFromPEM(pem) {
			return fmt.Errorf("error reading webhook CA file %s: no PEM certificates", a.Config.WebhookCAFile)
		}
		tlsCfg = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	if tlsCfg != nil {
		webhookCfg.HTTPClient = guard.NewHTTPClient(webhook.ClientOptions{Timeout: jobs.WebhookAttemptTimeout, TLSConfig: tlsCfg})
	}
	// Every job kind adds its registration here.
	exportStorage, err := a.openExportStorage()
	if err != nil {
		return err
	}
	regs := []jobs.Registration{
		jobs.WebhookRegistration(webhookCfg),
		jobs.ExportRegistration(a.DB, jobs.ExportConfig{Storage: exportStorage, LinkTTL: a.Config.ExportLinkTTL, StaleAfter: a.Config.ExportStaleAfter, Logger: a.Logger,
			MaxBytesPerDay: max(a.Config.ExportMaxBytesPerDay, 0)}),
		jobs.MeterPruneRegistration(jobs.MeterPruneConfig{Store: a.DB, Logger: a.Logger}),
		observe.RegisterJobMetrics,
	}
	client, err := jobs.NewClient(a.DB, a.Logger, regs...)
	if err != nil {
		return err
	}
	a.jobs = &jobRunner{
		client: client,
		webhooks: &rest.WebhookHandlers{
			DB:    a.DB.Bun,
			Queue: &jobs.WebhookDispatcher{Store: a.DB, Client: client},
			Guard: guard,
		},
		export: &rest.ExportHandlers{
			Store:             a.DB,
			Storage:           exportStorage,
			RedirectDownloads: a.Config.ExportDownloadRedirect,
			Enqueue:           jobs.EnqueueExport(client, 0),
			Secret:            []byte(a.Config.ExportURLSecret),
			BaseURL:           a.Config.PublicURL,
			MaxActiveJobs:     a.Config.ExportMaxActiveJobs,
			MaxBytesPerDay:    max(a.Config.ExportMaxBytesPerDay, 0),
		},
	}
	return nil
}

// River returns the process's River client, for inserting jobs in a
// transaction (client.InsertTx).
func (a *App) River() *river.Client[pgx.Tx] { return a.jobs.client }

// WebhookRoutes returns the /v1/webhooks route-table entries, bound to
// this app's database and job queue.
func (a *App) WebhookRoutes() []rest.Route { return rest.WebhookRoutes(a.jobs.webhooks) }

// StartJobs starts the River workers (webhook poller and deliveries, and
// every other registered kind) and the LISTEN on ingest notifications.
// Serve calls it; it is idempotent. Close stops them, letting running jobs
// finish within the shutdown timeout.
func (a *App) StartJobs(ctx context.Context) error {
	r := a.jobs
	r.once.Do(func() {
		if err := r.client.Start(context.WithoutCancel(ctx)); err != nil {
			r.startErr = fmt.Errorf("error starting river: %w", err)
			return
		}
		listenCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() {
			defer close(done)
			jobs.RunEventListener(listenCtx, a.DB, r.client, a.Logger)
		}()
		a.closers = append(a.closers, func(ctx context.Context) error {
			cancel()
			<-done
			if err := r.client.Stop(ctx); err != nil {
				return fmt.Errorf("error stopping river: %w", err)
			}
			return nil
		})
	})
	return r.startErr
}

// openExportStorage opens the export store: ExportStorageURL, else the
// local directory ExportDir. The store is closed with the app. A store
// that does not answer yet is logged, not fatal: exports retry under River
// until it does.
func (a *App) openExportStorage() (*exportstore.Bucket, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var (
		bucket *exportstore.Bucket
		err    error
	)
	if a.Config.ExportStorageURL != "" {
		bucket, err = exportstore.Open(ctx, a.Config.ExportStorageURL, exportstore.Options{})
	} else {
		bucket, err = exportstore.OpenDir(ctx, a.Config.ExportDir)
	}
	if err != nil {
		return nil, err
	}
	if err := bucket.Ping(ctx); err != nil {
		a.Logger.Error("export storage does not answer", "error", err)
	}
	a.closers = append(a.closers, func(context.Context) error { return bucket.Close() })
	return bucket, nil
}
