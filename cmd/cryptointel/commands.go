package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/demo"
	"github.com/cryptointel/cryptointel/observe"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func (m *Main) rootCommand() *cobra.Command {
	cfg := new(app.Config)
	root := &cobra.Command{
		Use:   "cryptointel",
		Short: "Crypto intelligence data API: entities, radar and signal events, relationships, search, webhooks and exports",
		Long: `cryptointel serves a read-mostly JSON API (/v1) and a GraphQL graph (/graphql)
over crypto entities, radar and signal events, relationships, markets and
references, backed by PostgreSQL.

Every setting is a flag or its environment variable; flags win. The
database is always DATABASE_URL (--database-url).`,
		Example: `  export DATABASE_URL=postgres://cryptointel:cryptointel@127.0.0.1:5432/cryptointel?sslmode=disable
  cryptointel migrate
  cryptointel seed --demo
  cryptointel keys create --plan pro --account acme
  cryptointel serve --addr :8080`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	dbBindings := bindConfig(root.PersistentFlags(), cfg, map[string]bool{"DatabaseURL": true})
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		return applyEnv(dbBindings, m.Getenv)
	}
	root.AddCommand(
		m.migrateCommand(cfg),
		m.serveCommand(cfg),
		m.ingestCommand(cfg),
		m.seedCommand(cfg),
		m.keysCommand(cfg),
		m.versionCommand(),
	)
	return root
}

// openStore opens the database named by cfg; Close closes it.
func (m *Main) openStore(ctx context.Context, cfg *app.Config) (*db.DB, error) {
	if cfg.DatabaseURL == "" {
		return nil, fmt.Errorf("no database configured: set DATABASE_URL or --database-url")
	}
	store, err := db.Open(ctx, cfg.DatabaseURL, db.Options{MaxConns: 4})
	if err != nil {
		return nil, err
	}
	m.closers = append(m.closers, func() error { return store.Close() })
	if err := store.Ping(ctx); err != nil {
		return nil, err
	}
	return store, nil
}

func (m *Main) migrateCommand(cfg *app.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply the database migrations (River's and the service's)",
		Long: `migrate applies every pending migration embedded in the binary, River's
first, under an advisory lock so concurrent starts do not race. It is
idempotent; serve runs it too.`,
		Example: `  cryptointel migrate
  DATABASE_URL=postgres://… cryptointel migrate`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if err := store.Migrate(cmd.Context()); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "migrations applied")
			return nil
		},
	}
}

func (m *Main) serveCommand(cfg *app.Config) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Migrate, then serve HTTP until SIGINT or SIGTERM",
		Long: `serve applies pending migrations, then serves /v1, /graphql, /playground,
/openapi.json, /admin/ingest, /healthz, /readyz and /metrics on ADDR, and
runs the background workers (webhook poller and delivery, exports).
SIGINT or SIGTERM drains in-flight requests (up to SHUTDOWN_TIMEOUT) and
stops; a second signal exits at once.

serve refuses to start unless CURSOR_SECRET and EXPORT_URL_SECRET (and
MPP_SECRET when payments are on) are set to random values of at least 32
characters, the same on every replica; --demo (DEMO=true) generates them
for the process instead, for a local demo.

Every setting below is a flag or the environment variable shown in
brackets; flags win over the environment, the environment over defaults.
When GOGC is unset serve governs the Go collector itself (400 while it
computes requests, toward 100 while it allocates little, as when it holds
many live streams); GOMEMLIMIT defaults to 96MiB here when it is unset.`,
		Example: `  CURSOR_SECRET=$(openssl rand -hex 32) EXPORT_URL_SECRET=$(openssl rand -hex 32) cryptointel serve
  cryptointel serve --demo --addr 127.0.0.1:9000
  cryptointel serve --addr :8080 --db-max-conns 32 --shutdown-timeout 30s`,
		Args: cobra.NoArgs,
	}
	only := map[string]bool{}
	for _, s := range app.Settings() {
		if s.Field != "DatabaseURL" {
			only[s.Field] = true
		}
	}
	bindings := bindConfig(cmd.Flags(), cfg, only)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := applyEnv(bindings, m.Getenv); err != nil {
			return err
		}
		if cfg.DatabaseURL == "" {
			return fmt.Errorf("no database configured: set DATABASE_URL or --database-url")
		}
		ctx := cmd.Context()
		if tuneGC(m.Getenv) {
			go governGC(ctx, time.Second)
		}
		logger := observe.NewLogger(m.Stderr, slog.LevelInfo)
		cfg.Logger = logger
		if cfg.Demo {
			if filled := cfg.FillDemoSecrets(); len(filled) > 0 {
				logger.Warn("demo mode: secrets generated for this process; cursors, export links and payment challenges stop verifying on restart",
					slog.String("generated", strings.Join(filled, ",")))
			}
		} else if err := cfg.CheckSecrets(); err != nil {
			return err
		}
		a, err := app.New(ctx, *cfg)
		if err != nil {
			return err
		}
		m.closers = append(m.closers, a.Close)
		if err := a.Migrate(ctx); err != nil {
			return err
		}
		ln, err := net.Listen("tcp", a.Config.Addr)
		if err != nil {
			return fmt.Errorf("error listening on %s: %w", a.Config.Addr, err)
		}
		logger.Info("listening", slog.String("addr", ln.Addr().String()), slog.String("version", version))
		if m.OnListen != nil {
			m.OnListen(ln.Addr())
		}
		if err := a.Serve(ctx, ln); err != nil {
			return err
		}
		logger.Info("stopped")
		return nil
	}
	return cmd
}

func (m *Main) ingestCommand(cfg *app.Config) *cobra.Command {
	var (
		batchSize int
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "ingest FILE|-",
		Short: "Upsert JSON Lines (entities, relationships, events, references, markets)",
		Long: `ingest reads JSON Lines from FILE, or from standard input with "-", and
upserts every record by id in batches, one transaction each. Re-ingesting
the same lines changes nothing. The line kinds are entity, relationship,
event, reference and market; the README documents each shape.

A bad line (invalid JSON, a missing field, an entity id that is neither
stored nor defined by an earlier line…) is reported with its line number
and reason on standard error; the good lines are applied anyway. The exit
status is non-zero when any line failed.

Progress goes to standard error: a bar of bytes read when it is a
terminal, a plain line every 10 batches otherwise.`,
		Example: `  cryptointel ingest events.jsonl
  gzip -dc dump.jsonl.gz | cryptointel ingest -
  cryptointel ingest --json events.jsonl | jq .failed`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var in io.Reader
			size := int64(-1)
			if args[0] == "-" {
				in = cmd.InOrStdin()
			} else {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
				if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
					size = fi.Size()
				}
			}
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			opts := db.IngestOptions{BatchSize: batchSize}
			in, endProgress := m.ingestProgress(cmd.ErrOrStderr(), in, size, &opts)
			summary, err := store.Ingest(cmd.Context(), in, opts)
			endProgress(err == nil)
			if summary != nil {
				if asJSON {
					enc := json.NewEncoder(cmd.OutOrStdout())
					enc.SetIndent("", "  ")
					if err := enc.Encode(summary); err != nil {
						return err
					}
				} else {
					printIngestSummary(cmd.OutOrStdout(), cmd.ErrOrStderr(), summary)
				}
			}
			if err != nil {
				return err
			}
			if summary.FailedCount > 0 {
				return &exitError{msg: fmt.Sprintf("%d of %d lines failed", summary.FailedCount, summary.Lines)}
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&batchSize, "batch-size", 500, "lines applied per transaction")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON on stdout")
	return cmd
}

func printIngestSummary(out, errOut io.Writer, s *db.IngestSummary) {
	for _, f := range s.Failed {
		fmt.Fprintf(errOut, "line %d: %s\n", f.Line, f.Reason)
	}
	if more := s.FailedCount - len(s.Failed); more > 0 {
		fmt.Fprintf(errOut, "… and %d more bad lines\n", more)
	}
	kinds := make([]string, 0, len(s.Applied))
	for _, k := range cryptointel.IngestKinds {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, s.Applied[k]))
	}
	fmt.Fprintf(out, "ingest: %d lines; applied %s; unchanged %d; events changed %d; failed %d\n",
		s.Lines, strings.Join(kinds, " "), s.Unchanged, s.EventsChanged, s.FailedCount)
}

func (m *Main) seedCommand(cfg *app.Config) *cobra.Command {
	var opts demo.Options
	var demoFlag bool
	cmd := &cobra.Command{
		Use:   "seed --demo [--events N] [--entities N] [--force]",
		Short: "Load the deterministic demo dataset into an empty database",
		Long: `seed --demo generates a deterministic, realistic dataset — projects with
tickers, foundations, exchanges, funds and regulators; FOUNDATION_OF,
LISTED_ON, INVESTED_IN, REGULATES, PARTNER_OF and BUILT_ON relationships;
radar events across categories with evidence over the last 30 days, about
30% of them signals; research, commentary, analysis and media items;
references and prediction markets — and bulk-loads it with COPY in one
transaction.

It does nothing when the database already holds entities or events, unless
--force, which replaces them. Large sizes work: --events 1000000 takes
minutes. Progress goes to standard error: a bar when it is a terminal,
plain lines otherwise.`,
		Example: `  cryptointel seed --demo
  cryptointel seed --demo --events 1000000
  cryptointel seed --demo --events 5000 --entities 800 --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !demoFlag {
				return fmt.Errorf("nothing to seed: pass --demo")
			}
			if opts.Events < 0 || opts.Entities < 0 {
				return fmt.Errorf("--events and --entities must not be negative")
			}
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			endProgress := m.seedProgress(cmd.ErrOrStderr(), &opts)
			res, err := demo.Seed(cmd.Context(), store, opts)
			endProgress()
			if err != nil {
				return err
			}
			if res.Skipped {
				fmt.Fprintln(cmd.OutOrStdout(), "seed: the database already has data; nothing seeded (use --force to replace it)")
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "seed: %d entities, %d relationships, %d references, %d events (%d signals), %d evidence posts, %d markets\n",
				res.Entities, res.Relationships, res.References, res.Events, res.Signals, res.Evidence, res.Markets)
			return nil
		},
	}
	cmd.Flags().BoolVar(&demoFlag, "demo", false, "generate the demo dataset (required)")
	cmd.Flags().IntVar(&opts.Events, "events", 20_000, "number of events")
	cmd.Flags().IntVar(&opts.Entities, "entities", 520, "number of entities (at least the ~230 named ones)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace existing entities, events and markets")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 0, "PRNG seed (0: the fixed default)")
	return cmd
}

func (m *Main) keysCommand(cfg *app.Config) *cobra.Command {
	keys := &cobra.Command{
		Use:   "keys",
		Short: "Manage API keys",
		Example: `  cryptointel keys create --plan free
  cryptointel keys create --plan enterprise --account acme --json`,
	}
	var plan, account string
	var asJSON bool
	create := &cobra.Command{
		Use:   "create --plan PLAN [--account NAME] [--json]",
		Short: "Create an API key (and its account when the name is new)",
		Long: `create adds an API key to the account NAME, creating the account on PLAN
when the name is new. Without --account a new account with a generated name
is created. Plans: free, pro, business, enterprise. An existing account keeps
its plan; asking for another plan is an error.

The key is shown once: it is stored only as a SHA-256 hash. The new key is
printed alone on the last line of standard output; --json prints
{"account","plan","keyId","key"} instead.`,
		Example: `  cryptointel keys create --plan pro --account acme
  KEY=$(cryptointel keys create --plan free | tail -n1)
  cryptointel keys create --plan business --account acme-bi --json | jq -r .key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if account == "" {
				var b [4]byte
				if _, err := rand.Read(b[:]); err != nil {
					return err
				}
				account = "account-" + hex.EncodeToString(b[:])
			}
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			plaintext, key, err := db.CreateAPIKey(cmd.Context(), store.Bun, account, plan)
			if err != nil {
				return fmt.Errorf("%s", cryptointel.ErrorMessage(err))
			}
			acct, err := db.AccountByID(cmd.Context(), store.Bun, key.AccountID)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(struct {
					Account string `json:"account"`
					Plan    string `json:"plan"`
					KeyID   int64  `json:"keyId"`
					Key     string `json:"key"`
				}{acct.Name, acct.Plan, key.ID, plaintext})
			}
			fmt.Fprintf(out, "account: %s (plan %s)\nkey id:  %d\nprefix:  %s\n%s\n", acct.Name, acct.Plan, key.ID, key.Prefix, plaintext)
			return nil
		},
	}
	create.Flags().StringVar(&plan, "plan", "", "plan of a new account: free, pro, business or enterprise (required)")
	create.Flags().StringVar(&account, "account", "", "account name (default: a new generated name)")
	create.Flags().BoolVar(&asJSON, "json", false, `print {"account","plan","keyId","key"} as JSON`)
	create.MarkFlagRequired("plan") //nolint:errcheck
	keys.AddCommand(create)
	return keys
}

func (m *Main) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version",
		Example: `  cryptointel version`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionString())
			return nil
		},
	}
}

func versionString() string {
	v := version
	if info, ok := debug.ReadBuildInfo(); ok {
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		if rev := settings["vcs.revision"]; rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if settings["vcs.modified"] == "true" {
				rev += "-dirty"
			}
			v += " (" + rev + ")"
		}
	}
	return fmt.Sprintf("cryptointel %s %s %s/%s", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
