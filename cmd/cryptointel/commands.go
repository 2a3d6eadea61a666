package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/demo"
	"github.com/cryptointel/cryptointel/ingest"
	"github.com/cryptointel/cryptointel/mcp"
	"github.com/cryptointel/cryptointel/oauth"
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
		m.healthcheckCommand(),
		m.mcpCommand(),
		m.versionCommand(),
		m.demoCommand(cfg),
		m.webhooksCommand(),
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
		app.Version = version
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
event, reference and market; docs/operations/ingest.md documents each shape.

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
			opts := ingest.Options{BatchSize: batchSize}
			in, endProgress := m.ingestProgress(cmd.ErrOrStderr(), in, size, &opts)
			summary, err := ingest.Write(cmd.Context(), store, in, opts)
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

func printIngestSummary(out, errOut io.Writer, s *ingest.Summary) {
	for _, f := range s.Failed {
		fmt.Fprintf(errOut, "line %d: %s\n", f.Line, f.Reason)
	}
	if more := s.FailedCount - len(s.Failed); more > 0 {
		fmt.Fprintf(errOut, "… and %d more bad lines\n", more)
	}
	kinds := make([]string, 0, len(s.Applied))
	for _, k := range ingest.Kinds {
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
		Long: `seed --demo generates a deterministic, coherent demo world — projects with
tickers, foundations, exchanges, funds and regulators; FOUNDATION_OF,
LISTED_ON, INVESTED_IN, REGULATES, PARTNER_OF and BUILT_ON relationships
that the events agree with; news over the last 30 days told by several
sources in their own words, storylines that recur over weeks and events
scheduled ahead (unlocks, upgrades, votes), about 30% of them signals;
research, commentary, analysis and media items; references and prediction
markets — and bulk-loads it with COPY in one transaction.

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
		Short: "Manage API keys and account plans",
		Long: `keys creates, lists, revokes and rotates API keys and changes an account's
plan. Every change is recorded in the audit trail (keys audit) and applies
to the next request on every server process: no process caches a key.`,
		Example: `  cryptointel keys create --plan free
  cryptointel keys create --plan enterprise --account acme --expires-in 90d --json
  cryptointel keys list --account acme
  cryptointel keys rotate 12 --grace 24h
  cryptointel keys revoke 12 --reason "leaked in a build log"
  cryptointel keys set-plan acme business
  cryptointel keys audit --account acme
  cryptointel keys recover --account acme
  cryptointel keys clients --account acme
  cryptointel keys disconnect 7`,
	}
	keys.AddCommand(m.keysCreateCommand(cfg), m.keysListCommand(cfg), m.keysRevokeCommand(cfg),
		m.keysRotateCommand(cfg), m.keysSetPlanCommand(cfg), m.keysAuditCommand(cfg), m.keysRecoverCommand(cfg),
		m.keysEnsureDemoCommand(cfg), m.keysClientsCommand(cfg), m.keysDisconnectCommand(cfg))
	return keys
}

// keysMaxActive is the cap on an account's active keys the keys commands
// apply: KEYS_MAX_ACTIVE, as the server reads it.
func (m *Main) keysMaxActive() (int, error) {
	v := strings.TrimSpace(m.Getenv("KEYS_MAX_ACTIVE"))
	if v == "" {
		return db.DefaultMaxActiveKeys, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("KEYS_MAX_ACTIVE: want an integer, got %q", v)
	}
	return n, nil
}

// splitList splits a comma-separated flag value, dropping empty items; an
// empty value is nil.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// expiryFlags are --expires-in and --expires-at.
type expiryFlags struct{ in, at string }

func (e *expiryFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&e.in, "expires-in", "", `expire the key after this long: a Go duration ("720h") or days ("90d")`)
	cmd.Flags().StringVar(&e.at, "expires-at", "", "expire the key at this ISO 8601 instant")
	cmd.MarkFlagsMutuallyExclusive("expires-in", "expires-at")
}

// expiry returns the instant the flags ask for, nil for none.
func (e *expiryFlags) expiry() (*time.Time, error) {
	switch {
	case e.in != "":
		d, err := parseDays(e.in)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("--expires-in: want a positive duration such as 720h or 90d, got %q", e.in)
		}
		t := time.Now().Add(d).UTC().Truncate(time.Second)
		return &t, nil
	case e.at != "":
		t, err := cryptointel.ParseInstant(e.at)
		if err != nil {
			return nil, fmt.Errorf("--expires-at: %s", cryptointel.ErrorMessage(err))
		}
		return &t, nil
	}
	return nil, nil
}

// parseDays parses a Go duration, or a whole number of days written "90d".
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, err
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// keyIDArg parses a key id argument.
func keyIDArg(arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("key id must be a positive integer, got %q", arg)
	}
	return id, nil
}

// userError turns a domain error into the message the command prints.
func userError(err error) error {
	var de *cryptointel.Error
	if errors.As(err, &de) {
		return fmt.Errorf("%s", de.Message)
	}
	return err
}

func (m *Main) keysCreateCommand(cfg *app.Config) *cobra.Command {
	var plan, account, scopes, surfaces string
	var asJSON bool
	var exp expiryFlags
	create := &cobra.Command{
		Use:   "create --plan PLAN [--account NAME] [--expires-in D | --expires-at T] [--json]",
		Short: "Create an API key (and its account when the name is new)",
		Long: `create adds an API key to the account NAME, creating the account on PLAN
when the name is new. Without --account a new account with a generated name
is created. Plans: free, pro, business, enterprise. An existing account keeps
its plan; asking for another plan is an error (use keys set-plan).

--expires-in or --expires-at make the key stop working at that time
("API key has expired."); without them it works until revoked.

--scopes sets what the key may do: data (read the API), management (manage
the account's keys through /v1/keys). Without it the account's first key
(while it has no active management key) gets data,management and later
keys get data. --surfaces makes a restricted key: reading only those
surfaces (lookup, query, feed, timeline, replay, brief, delivery, export,
graphql, stream), data scope only. An account has at most KEYS_MAX_ACTIVE
(10) active keys.

The key is shown once: it is stored only as a SHA-256 hash. The new key is
printed alone on the last line of standard output; --json prints
{"account","plan","keyId","key","expiresAt","scopes","surfaces"} instead.`,
		Example: `  cryptointel keys create --plan pro --account acme
  KEY=$(cryptointel keys create --plan free | tail -n1)
  cryptointel keys create --plan business --account acme-bi --expires-in 90d --json | jq -r .key
  cryptointel keys create --plan pro --account acme --surfaces lookup,query --expires-in 30d`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			expiresAt, err := exp.expiry()
			if err != nil {
				return err
			}
			if account == "" {
				var b [4]byte
				if _, err := rand.Read(b[:]); err != nil {
					return err
				}
				account = "account-" + hex.EncodeToString(b[:])
			}
			maxActive, err := m.keysMaxActive()
			if err != nil {
				return err
			}
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			nk := db.NewAPIKey{Account: account, Plan: plan, ExpiresAt: expiresAt, Actor: db.ActorCLI,
				Scopes: splitList(scopes), MaxActive: maxActive}
			if cmd.Flags().Changed("surfaces") {
				nk.Surfaces = append([]string{}, splitList(surfaces)...)
			}
			plaintext, key, err := db.CreateAPIKeyWith(cmd.Context(), store.Bun, nk)
			if err != nil {
				return userError(err)
			}
			acct, err := db.AccountByID(cmd.Context(), store.Bun, key.AccountID)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(struct {
					Account   string     `json:"account"`
					Plan      string     `json:"plan"`
					KeyID     int64      `json:"keyId"`
					Key       string     `json:"key"`
					ExpiresAt *time.Time `json:"expiresAt"`
					Scopes    []string   `json:"scopes"`
					Surfaces  []string   `json:"surfaces"`
				}{acct.Name, acct.Plan, key.ID, plaintext, expiresAt, key.Scopes, key.Surfaces})
			}
			fmt.Fprintf(out, "account: %s (plan %s)\nkey id:  %d\nprefix:  %s\nscopes:  %s\n", acct.Name, acct.Plan, key.ID, key.Prefix, strings.Join(key.Scopes, ","))
			if key.Surfaces != nil {
				fmt.Fprintf(out, "restricted to: %s (read only)\n", strings.Join(key.Surfaces, ","))
			}
			if expiresAt != nil {
				fmt.Fprintf(out, "expires: %s\n", expiresAt.Format(time.RFC3339))
			}
			fmt.Fprintln(out, plaintext)
			return nil
		},
	}
	create.Flags().StringVar(&plan, "plan", "", "plan of a new account: free, pro, business or enterprise (required)")
	create.Flags().StringVar(&account, "account", "", "account name (default: a new generated name)")
	create.Flags().BoolVar(&asJSON, "json", false, `print {"account","plan","keyId","key","expiresAt","scopes","surfaces"} as JSON`)
	create.Flags().StringVar(&scopes, "scopes", "", "comma-separated scopes: data, management (default: data,management for the account's first key, else data)")
	create.Flags().StringVar(&surfaces, "surfaces", "", "make a restricted key reading only these comma-separated surfaces (e.g. lookup,query)")
	exp.bind(create)
	create.MarkFlagRequired("plan") //nolint:errcheck
	return create
}

func (m *Main) keysListCommand(cfg *app.Config) *cobra.Command {
	var f db.KeyFilter
	var asJSON bool
	list := &cobra.Command{
		Use:   "list [--account NAME] [--active] [--json]",
		Short: "List API keys, newest first, with their status and last use",
		Long: `list prints every key (of the account NAME with --account), newest first:
id, account, plan, prefix, status (active, revoked or expired), when it was
created, when it expires, when it was last used (to the minute: the start
of the rate window of its last request), the key a rotation replaced it
with and its scopes (and surfaces, for a restricted key). --active leaves
out revoked and expired keys; --json prints a JSON array of the same
fields.`,
		Example: `  cryptointel keys list
  cryptointel keys list --account acme --active
  cryptointel keys list --json | jq '.[] | select(.lastUsedAt == null) | .id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			keys, err := db.ListAPIKeys(cmd.Context(), store.Bun, f)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(keys)
			}
			printKeys(cmd.OutOrStdout(), keys)
			return nil
		},
	}
	list.Flags().StringVar(&f.Account, "account", "", "only the keys of this account")
	list.Flags().BoolVar(&f.ActiveOnly, "active", false, "leave out revoked and expired keys")
	list.Flags().BoolVar(&asJSON, "json", false, "print the keys as a JSON array")
	return list
}

// printKeys writes keys as an aligned table.
func printKeys(out io.Writer, keys []*db.APIKeyView) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACCOUNT\tPLAN\tPREFIX\tSTATUS\tCREATED\tEXPIRES\tLAST USED\tREPLACED BY\tSCOPES")
	for _, k := range keys {
		replaced := "-"
		if k.ReplacedBy != nil {
			replaced = strconv.FormatInt(*k.ReplacedBy, 10)
		}
		scopes := strings.Join(k.Scopes, ",")
		if k.Surfaces != nil {
			scopes += " (restricted: " + strings.Join(k.Surfaces, ",") + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Account, k.Plan, k.Prefix, k.Status,
			k.CreatedAt.Format(time.RFC3339), timeOrDash(k.ExpiresAt, "never"), timeOrDash(k.LastUsedAt, "never"), replaced, scopes)
	}
	tw.Flush() //nolint:errcheck
}

func timeOrDash(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.Format(time.RFC3339)
}

func (m *Main) keysRevokeCommand(cfg *app.Config) *cobra.Command {
	var reason string
	revoke := &cobra.Command{
		Use:   "revoke KEY_ID [--reason TEXT]",
		Short: "Revoke an API key at once",
		Long: `revoke makes the key unusable from the next request on, on every server
process: requests with it get 401 "API key has been revoked.", and its open
live streams close at their next settlement (within STREAM_SETTLE_INTERVAL,
1 s by default). The reason is kept in the audit trail.`,
		Example: `  cryptointel keys revoke 12
  cryptointel keys revoke 12 --reason "leaked in a build log"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := keyIDArg(args[0])
			if err != nil {
				return err
			}
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			k, err := db.RevokeAPIKey(cmd.Context(), store.Bun, db.KeyRevocation{KeyID: id, Actor: db.ActorCLI, Reason: reason})
			if err != nil {
				return userError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "key %d (%s, account %s) revoked at %s\n", k.ID, k.Prefix, k.Account, k.RevokedAt.Format(time.RFC3339))
			return nil
		},
	}
	revoke.Flags().StringVar(&reason, "reason", "", "why, for the audit trail")
	return revoke
}

func (m *Main) keysRotateCommand(cfg *app.Config) *cobra.Command {
	var grace string
	var asJSON bool
	var exp expiryFlags
	rotate := &cobra.Command{
		Use:   "rotate KEY_ID [--grace D] [--expires-in D | --expires-at T] [--json]",
		Short: "Replace an API key with a new one on the same account",
		Long: `rotate creates a new key on the key's account and retires the old one:
revoked at once, or, with --grace, still working for that long (at most
168h) and then expired, so clients can move over without a gap. The new key
inherits the old one's scopes, restriction and expiry: --expires-in or
--expires-at may bring the expiry closer, never later or away. The
account's credits and rate window are the account's and do not change. A
rotation with --grace needs room under KEYS_MAX_ACTIVE (10) active keys.
The new key is shown once, alone on the last line of standard output;
--json prints {"keyId","key","expiresAt","replaced":{…the old key…}}
instead.`,
		Example: `  cryptointel keys rotate 12
  NEW=$(cryptointel keys rotate 12 --grace 24h | tail -n1)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := keyIDArg(args[0])
			if err != nil {
				return err
			}
			var g time.Duration
			if grace != "" {
				if g, err = parseDays(grace); err != nil {
					return fmt.Errorf("--grace: want a duration such as 24h or 1d, got %q", grace)
				}
			}
			expiresAt, err := exp.expiry()
			if err != nil {
				return err
			}
			maxActive, err := m.keysMaxActive()
			if err != nil {
				return err
			}
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			plaintext, created, old, err := db.RotateAPIKey(cmd.Context(), store.Bun, db.KeyRotation{KeyID: id, Grace: g, ExpiresAt: expiresAt, Actor: db.ActorCLI, MaxActive: maxActive})
			if err != nil {
				return userError(err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(struct {
					KeyID     int64          `json:"keyId"`
					Key       string         `json:"key"`
					ExpiresAt *time.Time     `json:"expiresAt"`
					Replaced  *db.APIKeyView `json:"replaced"`
				}{created.ID, plaintext, created.ExpiresAt, old})
			}
			if old.RevokedAt != nil {
				fmt.Fprintf(out, "key %d revoked\n", old.ID)
			} else {
				fmt.Fprintf(out, "key %d keeps working until %s\n", old.ID, timeOrDash(old.ExpiresAt, "-"))
			}
			fmt.Fprintf(out, "account: %s (plan %s)\nkey id:  %d\nprefix:  %s\n", created.Account, created.Plan, created.ID, created.Prefix)
			if created.ExpiresAt != nil {
				fmt.Fprintf(out, "expires: %s\n", created.ExpiresAt.Format(time.RFC3339))
			}
			fmt.Fprintln(out, plaintext)
			return nil
		},
	}
	rotate.Flags().StringVar(&grace, "grace", "", "keep the old key working this long (e.g. 24h; at most 168h); default: revoke it at once")
	rotate.Flags().BoolVar(&asJSON, "json", false, "print the new key and the replaced one as JSON")
	exp.bind(rotate)
	return rotate
}

func (m *Main) keysRecoverCommand(cfg *app.Config) *cobra.Command {
	var account, reason string
	var asJSON bool
	var exp expiryFlags
	cmdRecover := &cobra.Command{
		Use:   "recover --account NAME [--reason TEXT] [--expires-in D | --expires-at T] [--json]",
		Short: "Take an account back from whoever holds its keys: revoke them all, issue one management key",
		Long: `recover is for an owner whose keys were stolen. In one transaction it
revokes every key of the account that is not revoked yet (active ones,
ones in a rotation's grace period, restricted ones) and creates one new key
with the data and management scopes: whoever held the old keys gets 401
"API key has been revoked." from the next request on, on every server
process, and their open streams close within a second. The account's plan,
credits, rate window, webhooks and export jobs are untouched. Each
revocation and the new key are recorded in the audit trail (reason
"recovery" unless --reason). Give the new key to the owner over a channel
you trust; it is shown once, alone on the last line of standard output;
--json prints {"account","keyId","key","expiresAt","revoked":[…ids…]}.`,
		Example: `  cryptointel keys recover --account acme
  cryptointel keys recover --account acme --reason "keys leaked in a public repo" --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			expiresAt, err := exp.expiry()
			if err != nil {
				return err
			}
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			plaintext, key, revoked, err := db.RecoverAccount(cmd.Context(), store.Bun, db.Recovery{Account: account, ExpiresAt: expiresAt, Reason: reason, Actor: db.ActorCLI})
			if err != nil {
				return userError(err)
			}
			out := cmd.OutOrStdout()
			if revoked == nil {
				revoked = []int64{}
			}
			if asJSON {
				return json.NewEncoder(out).Encode(struct {
					Account   string     `json:"account"`
					KeyID     int64      `json:"keyId"`
					Key       string     `json:"key"`
					ExpiresAt *time.Time `json:"expiresAt"`
					Revoked   []int64    `json:"revoked"`
				}{account, key.ID, plaintext, key.ExpiresAt, revoked})
			}
			ids := make([]string, len(revoked))
			for i, id := range revoked {
				ids[i] = strconv.FormatInt(id, 10)
			}
			fmt.Fprintf(out, "account %s: %d keys revoked (%s)\nkey id:  %d\nprefix:  %s\nscopes:  %s\n", account, len(revoked), strings.Join(ids, ", "),
				key.ID, key.Prefix, strings.Join(key.Scopes, ","))
			fmt.Fprintln(out, plaintext)
			return nil
		},
	}
	cmdRecover.Flags().StringVar(&account, "account", "", "the account to recover (required)")
	cmdRecover.Flags().StringVar(&reason, "reason", "", `why, for the audit trail (default "recovery")`)
	cmdRecover.Flags().BoolVar(&asJSON, "json", false, "print the new key and the revoked key ids as JSON")
	exp.bind(cmdRecover)
	cmdRecover.MarkFlagRequired("account") //nolint:errcheck
	return cmdRecover
}

func (m *Main) keysSetPlanCommand(cfg *app.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "set-plan ACCOUNT PLAN",
		Short: "Move an account (all its keys) to another plan",
		Long: `set-plan changes the plan of the account ACCOUNT, and so of every key of
it, from the next request on, on every server process; open live streams of
a plan without streams close at their next settlement. Plans: free, pro,
business, enterprise.`,
		Example: `  cryptointel keys set-plan acme business`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			from, err := db.SetAccountPlan(cmd.Context(), store.Bun, args[0], args[1], db.ActorCLI)
			if err != nil {
				return userError(err)
			}
			if from == args[1] {
				fmt.Fprintf(cmd.OutOrStdout(), "account %s is already on plan %s\n", args[0], from)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "account %s: plan %s -> %s\n", args[0], from, args[1])
			return nil
		},
	}
}

func (m *Main) keysClientsCommand(cfg *app.Config) *cobra.Command {
	var account string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "clients --account NAME [--json]",
		Short: "List the OAuth clients connected to an account's keys",
		Long: `clients lists the applications connected to /mcp through OAuth (claude.ai,
ChatGPT, …) with a key of the account, newest first: connection id, key,
client name and id, scope, when it was connected and last used. A
connection ends when it is revoked (keys disconnect), or when its key is
revoked, rotated or expires. --json prints a JSON array of the same.`,
		Example: `  cryptointel keys clients --account acme`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if account == "" {
				return userError(fmt.Errorf("--account is required"))
			}
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			acct, err := db.AccountByName(cmd.Context(), store.Bun, account)
			if err != nil {
				return userError(err)
			}
			grants, err := oauth.Store{DB: store}.OAuthGrants(cmd.Context(), acct.ID)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(grants)
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tKEY\tCLIENT\tCLIENT_ID\tSCOPE\tCONNECTED\tLAST_USED")
			for _, g := range grants {
				fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.KeyID, g.ClientName, g.ClientID, g.Scope,
					g.CreatedAt.UTC().Format(time.RFC3339), timeOrDash(g.LastUsedAt, "never"))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&account, "account", "", "the account whose connections to list")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the connections as a JSON array")
	return cmd
}

func (m *Main) keysDisconnectCommand(cfg *app.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "disconnect CONNECTION_ID",
		Short: "Revoke an OAuth client's connection to an account",
		Long: `disconnect revokes a connection listed by keys clients: its access and refresh
tokens stop working within a second on every server process, and the
client must be authorized again. The key audit trail records it.`,
		Example: `  cryptointel keys disconnect 7`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return userError(fmt.Errorf("connection id must be a positive integer, got %q", args[0]))
			}
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if err := (oauth.Store{DB: store}).RevokeOAuthGrant(cmd.Context(), 0, id, db.ActorCLI); err != nil {
				return userError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "connection %d revoked\n", id)
			return nil
		},
	}
}

func (m *Main) keysAuditCommand(cfg *app.Config) *cobra.Command {
	var account string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "audit [--account NAME] [--limit N] [--json]",
		Short: "Show the audit trail of key and plan changes, newest first",
		Long: `audit prints the recorded changes (key.created, key.revoked, key.rotated,
account.plan_set, account.keys_recovered, oauth.granted, oauth.revoked), newest first: when, account, key, action, actor ("cli",
or "api_key:<id>" for a change made through /v1/keys) and details.`,
		Example: `  cryptointel keys audit --account acme --limit 20`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			var accountID int64
			if account != "" {
				acct, err := db.AccountByName(cmd.Context(), store.Bun, account)
				if err != nil {
					return userError(err)
				}
				accountID = acct.ID
			}
			entries, err := db.KeyAudit(cmd.Context(), store.Bun, accountID, limit)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(entries)
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "AT\tACCOUNT\tKEY\tACTION\tACTOR\tDETAIL")
			for _, e := range entries {
				key := "-"
				if e.APIKeyID != nil {
					key = strconv.FormatInt(*e.APIKeyID, 10)
				}
				detail, _ := json.Marshal(e.Detail)
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", e.At.Format(time.RFC3339), e.AccountID, key, e.Action, e.Actor, detail)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&account, "account", "", "only this account's changes")
	cmd.Flags().IntVar(&limit, "limit", 50, "how many changes to show")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the changes as a JSON array")
	return cmd
}

func (m *Main) healthcheckCommand() *cobra.Command {
	var url string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "healthcheck [--url URL] [--timeout D]",
		Short: "Probe a running server's readiness; exit 0 when ready",
		Long: `healthcheck sends GET /readyz to the server on this machine (the port of
ADDR, default :8080, on 127.0.0.1) and exits 0 when it answers 200 ready,
1 otherwise, printing why. It needs no shell, curl or API key, so a
container image built FROM scratch can use it as its HEALTHCHECK; --url
probes another address (or /healthz, for liveness only).`,
		Example: `  cryptointel healthcheck
  ADDR=:9000 cryptointel healthcheck
  cryptointel healthcheck --url http://127.0.0.1:8080/healthz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			target := url
			if target == "" {
				target = readyzURL(m.Getenv("ADDR"))
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
			if err != nil {
				return &exitError{msg: fmt.Sprintf("unhealthy: %v", err)}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return &exitError{msg: fmt.Sprintf("unhealthy: %v", err)}
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
			if resp.StatusCode != http.StatusOK {
				return &exitError{msg: fmt.Sprintf("unhealthy: %s answered %d %s", target, resp.StatusCode, strings.TrimSpace(string(body)))}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "healthy: %s\n", strings.TrimSpace(string(body)))
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "URL to probe (default: http://127.0.0.1:<port of ADDR>/readyz)")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "give up after this long")
	return cmd
}

// readyzURL is the readiness URL of a server listening on addr (":8080"
// when empty), reached over loopback when it listens on every interface.
func readyzURL(addr string) string {
	if addr == "" {
		addr = ":8080"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/readyz"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz"
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

func (m *Main) mcpCommand() *cobra.Command {
	var url, key string
	cmd := &cobra.Command{
		Use:   "mcp --url URL [--key KEY]",
		Short: "Bridge an MCP client on standard input and output to a server's /mcp",
		Long: `mcp connects a desktop MCP client that launches servers as local processes
(stdio) to a cryptointel server's Streamable HTTP endpoint: it reads JSON-RPC
messages from standard input, one per line, posts each to URL (/mcp is added
to a URL without a path) with the key as a Bearer key, and writes the answers
to standard output. Without a key, the server must take payments per call.
A refusal at the HTTP level (a wrong key) is answered as a JSON-RPC error
carrying the server's message. Flags win over CRYPTOINTEL_URL and
CRYPTOINTEL_API_KEY.`,
		Example: `  cryptointel mcp --url https://api.example.com --key ci_...
  CRYPTOINTEL_URL=http://localhost:8080 CRYPTOINTEL_API_KEY=ci_... cryptointel mcp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if url == "" {
				url = m.Getenv("CRYPTOINTEL_URL")
			}
			if key == "" {
				key = m.Getenv("CRYPTOINTEL_API_KEY")
			}
			if url == "" {
				return fmt.Errorf("no server: set --url or CRYPTOINTEL_URL")
			}
			return mcp.Bridge(cmd.Context(), m.Stdin, m.Stdout, mcp.BridgeConfig{
				URL: url, Key: key, UserAgent: "cryptointel-mcp-bridge/" + version,
			})
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "the server's URL, e.g. https://api.example.com (env CRYPTOINTEL_URL)")
	cmd.Flags().StringVar(&key, "key", "", "the API key (env CRYPTOINTEL_API_KEY)")
	return cmd
}
