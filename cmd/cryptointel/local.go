package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/demo"
	"github.com/cryptointel/cryptointel/jobs"
	"github.com/cryptointel/cryptointel/webhook"
)

// The local loop: what `make run` and a developer trying the service on
// their machine use (demo keys, the address check, a demo event, a local
// webhook receiver).

// demoPlans are the plans `keys ensure-demo` keeps one key of, in the order
// it prints them.
var demoPlans = []string{"free", "pro", "business", "enterprise"}

// demoKeyLifetime is how long a demo key works; ensure-demo replaces an
// expired one.
const demoKeyLifetime = 30 * 24 * time.Hour

func (m *Main) keysEnsureDemoCommand(cfg *app.Config) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "ensure-demo [--file FILE]",
		Short: "Print one demo key per plan, reusing the ones a previous run created",
		Long: `ensure-demo keeps one API key per plan (free, pro, business, enterprise) on
the accounts demo-free, demo-pro, demo-business and demo-enterprise, and prints
them, labelled by plan. Keys are stored only as hashes, so the plaintexts are
kept in FILE (mode 0600); a key from FILE that still works on its account is
printed again, and only a missing, revoked or expired one is replaced, so
reruns of make run do not multiply keys. Demo keys expire after 30 days.`,
		Example: `  cryptointel keys ensure-demo --file bin/demo-keys.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			saved := map[string]string{}
			if b, err := os.ReadFile(file); err == nil {
				if err := json.Unmarshal(b, &saved); err != nil {
					return fmt.Errorf("error reading %s: %w (delete it to start over)", file, err)
				}
			} else if !errors.Is(err, os.ErrNotExist) {
				return err
			}
			keys := map[string]string{}
			var created, reused []string
			for _, plan := range demoPlans {
				account := "demo-" + plan
				if k := saved[plan]; k != "" && demoKeyUsable(cmd.Context(), store, k, account, plan) {
					keys[plan] = k
					reused = append(reused, plan)
					continue
				}
				exp := time.Now().Add(demoKeyLifetime).UTC().Truncate(time.Second)
				plaintext, _, err := db.CreateAPIKeyWith(cmd.Context(), store.Bun, db.NewAPIKey{Account: account, Plan: plan, ExpiresAt: &exp, Actor: db.ActorCLI})
				if err != nil {
					return fmt.Errorf("demo key for %s: %w", plan, userError(err))
				}
				keys[plan] = plaintext
				created = append(created, plan)
			}
			if len(created) > 0 {
				b, err := json.MarshalIndent(keys, "", "  ")
				if err != nil {
					return err
				}
				if dir := filepath.Dir(file); dir != "" {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						return err
					}
				}
				if err := os.WriteFile(file, append(b, '\n'), 0o600); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, "Demo API keys (send as: Authorization: Bearer <key>):")
			for _, plan := range demoPlans {
				fmt.Fprintf(out, "  %-11s %s\n", plan, keys[plan])
			}
			switch {
			case len(created) == 0:
				fmt.Fprintf(cmd.ErrOrStderr(), "demo keys: reused the %d keys kept in %s\n", len(reused), file)
			case len(reused) == 0:
				fmt.Fprintf(cmd.ErrOrStderr(), "demo keys: created %d keys (kept in %s for the next run)\n", len(created), file)
			default:
				fmt.Fprintf(cmd.ErrOrStderr(), "demo keys: reused %s, created %s (kept in %s)\n", strings.Join(reused, ", "), strings.Join(created, ", "), file)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "file", "bin/demo-keys.json", "where the demo keys' plaintexts are kept between runs")
	return cmd
}

// demoKeyUsable reports whether key is an active key of account on plan.
func demoKeyUsable(ctx context.Context, store *db.DB, key, account, plan string) bool {
	info, err := store.KeyByHash(ctx, db.HashAPIKey(key))
	if err != nil || info.Revoked || info.Plan != plan {
		return false
	}
	acct, err := db.AccountByName(ctx, store.Bun, account)
	return err == nil && acct.ID == info.AccountID
}

func (m *Main) demoCommand(cfg *app.Config) *cobra.Command {
	d := &cobra.Command{
		Use:   "demo",
		Short: "The local demo: check the address, emit a live event",
		Long: `demo holds what make run and a developer trying the service locally use:
check-addr tells whether the demo server can listen where asked, before
anything is created; emit ingests a new event so the feeds, the live streams
and the webhooks have something to show.`,
	}
	d.AddCommand(m.demoCheckAddrCommand(), m.demoEmitCommand(cfg))
	return d
}

func (m *Main) demoCheckAddrCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "check-addr ADDR",
		Short: "Exit non-zero, with a hint, when ADDR cannot be listened on",
		Long: `check-addr listens on ADDR (host:port) and closes it at once: it succeeds
when a server could listen there, and otherwise says why, with the ADDR=
setting that picks another port. make run runs it before it migrates, seeds
or prints keys.`,
		Example: `  cryptointel demo check-addr 127.0.0.1:8080`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			addr := args[0]
			ln, err := net.Listen("tcp", addr)
			if err == nil {
				return ln.Close()
			}
			host, port, serr := net.SplitHostPort(addr)
			if serr != nil {
				return fmt.Errorf("cannot listen on %s: %w", addr, err)
			}
			if host == "" {
				host = "127.0.0.1"
			}
			next := "8081"
			if port == "8081" {
				next = "8082"
			}
			hint := "make run ADDR=" + net.JoinHostPort(host, next)
			if errors.Is(err, syscall.EADDRINUSE) {
				return fmt.Errorf("cannot listen on %s: the port is already in use (another make run?). Stop that server, or pick another port: %s", addr, hint)
			}
			return fmt.Errorf("cannot listen on %s: %w. Pick another address: %s", addr, err, hint)
		},
	}
}

func (m *Main) demoEmitCommand(cfg *app.Config) *cobra.Command {
	var opts demo.EmitOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "emit [--radar] [--json]",
		Short: "Ingest one new, believable event about the demo entities, dated now",
		Long: `emit writes one new event about the demo entities (a partnership, a
funding round, a listing, an upgrade… naming its owner and participant, with
bullets and an evidence post dated now) and ingests it as cryptointel ingest
would: open /v1/stream and GraphQL subscriptions receive it, webhooks are
delivered it, and the newest-first feeds start with it. It is a signal
(significance 6 to 9.5) unless --radar. The demo data must be loaded (seed
--demo; make run does).`,
		Example: `  cryptointel demo emit
  cryptointel demo emit --radar --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := m.openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			ev, err := demo.Emit(cmd.Context(), store, opts)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(ev)
			}
			kind := "radar event"
			if ev.Significance != nil {
				kind = fmt.Sprintf("signal (significance %.1f)", *ev.Significance)
			}
			fmt.Fprintf(out, "emitted event %d, a %s: %q [%s/%s] at %s\n", ev.ID, kind, ev.Title, ev.Category, ev.Subcategory, ev.At)
			return nil
		},
	}
	cmd.Flags().BoolVar(&opts.Radar, "radar", false, "a radar-only event (no significance), not a signal")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the event as JSON")
	return cmd
}

func (m *Main) webhooksCommand() *cobra.Command {
	w := &cobra.Command{
		Use:   "webhooks",
		Short: "Receive a server's webhooks on this machine",
	}
	w.AddCommand(m.webhooksListenCommand())
	return w
}

func (m *Main) webhooksListenCommand() *cobra.Command {
	var url, key, forward, listen string
	var events []string
	cmd := &cobra.Command{
		Use:   "listen [--url URL] [--key KEY] [--forward-to URL] [--events radar,signal]",
		Short: "Register a webhook to a receiver on this machine, print each delivery and its signature check",
		Long: `listen starts a webhook receiver on this machine (--listen, 127.0.0.1 on a
free port), registers it on the server as a webhook of the key's account for
the event types --events (POST /v1/webhooks), and runs until interrupted,
then deletes the webhook. For each delivery it prints a line: the delivery
id, the event's id and title, and whether both signatures (X-Service-Signature
and the Standard Webhooks webhook-signature) verify with the webhook's
secret. With --forward-to it also forwards each delivery, body and headers
unchanged, to that URL and answers the server with that URL's status, as
stripe listen does.

The receiver is plain http:// on loopback, which a server accepts only in
demo mode (make run); a production server requires a public https URL.
Flags win over CRYPTOINTEL_URL and CRYPTOINTEL_API_KEY. The key's plan must
include webhooks (pro and up).`,
		Example: `  cryptointel webhooks listen --url http://127.0.0.1:8080 --key ci_...
  cryptointel webhooks listen --forward-to http://localhost:3000/hooks/cryptointel`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m.clientEnv(&url, &key)
			if url == "" {
				url = "http://127.0.0.1:8080"
			}
			if key == "" {
				return fmt.Errorf("no key: set --key or CRYPTOINTEL_API_KEY (a key of a plan with webhooks, pro and up; make run prints them)")
			}
			return m.listenWebhooks(cmd.Context(), cmd.OutOrStdout(), listenConfig{
				server: strings.TrimRight(url, "/"), key: key, forward: forward, listen: listen, events: events,
			})
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "the server's URL (env CRYPTOINTEL_URL; default http://127.0.0.1:8080)")
	cmd.Flags().StringVar(&key, "key", "", "the API key (env CRYPTOINTEL_API_KEY)")
	cmd.Flags().StringVar(&forward, "forward-to", "", "forward each delivery to this URL")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "the receiver's address")
	cmd.Flags().StringSliceVar(&events, "events", []string{"radar", "signal"}, "the event types to receive")
	return cmd
}

type listenConfig struct {
	server, key, forward, listen string
	events                       []string
}

// listenWebhooks runs `webhooks listen` until ctx ends.
func (m *Main) listenWebhooks(ctx context.Context, out io.Writer, c listenConfig) error {
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return fmt.Errorf("error starting the receiver: %w", err)
	}
	defer ln.Close()
	receiver := "http://" + ln.Addr().String() + "/webhook"

	client := &http.Client{Timeout: 15 * time.Second}
	api := func(ctx context.Context, method, path string, body any) (int, []byte, error) {
		var r io.Reader
		if body != nil {
			b, err := json.Marshal(body)
			if err != nil {
				return 0, nil, err
			}
			r = bytes.NewReader(b)
		}
		req, err := http.NewRequestWithContext(ctx, method, c.server+path, r)
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Authorization", "Bearer "+c.key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, b, err
	}
	status, body, err := api(ctx, http.MethodPost, "/v1/webhooks", map[string]any{"url": receiver, "event_types": c.events})
	if err != nil {
		return fmt.Errorf("error registering the webhook on %s: %w", c.server, err)
	}
	if status != http.StatusCreated {
		return fmt.Errorf("the server refused the webhook (%d): %s", status, serverMessage(body))
	}
	var created struct {
		Data struct {
			ID     int64  `json:"id"`
			Secret string `json:"secret"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &created); err != nil || created.Data.Secret == "" {
		return fmt.Errorf("unexpected answer registering the webhook: %s", body)
	}
	hookID, secret := created.Data.ID, created.Data.Secret
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if status, body, err := api(dctx, http.MethodDelete, fmt.Sprintf("/v1/webhooks/%d", hookID), nil); err != nil || status/100 != 2 {
			fmt.Fprintf(out, "could not delete webhook %d (%d %s %v): delete it with DELETE /v1/webhooks/%d\n", hookID, status, serverMessage(body), err, hookID)
			return
		}
		fmt.Fprintf(out, "webhook %d deleted\n", hookID)
	}()
	fmt.Fprintf(out, "webhook %d registered on %s for %s, delivering to %s\n", hookID, c.server, strings.Join(c.events, ","), receiver)
	fmt.Fprintf(out, "signing secret: %s\n", secret)
	if c.forward != "" {
		fmt.Fprintf(out, "forwarding each delivery to %s\n", c.forward)
	}
	fmt.Fprintln(out, "ready: waiting for deliveries (Ctrl-C stops and deletes the webhook)")

	var printMu = make(chan struct{}, 1)
	forwardClient := &http.Client{Timeout: 10 * time.Second}
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(io.LimitReader(r.Body, 2*jobs.WebhookMaxBodyBytes))
			if err != nil || r.Method != http.MethodPost {
				http.Error(w, "bad delivery", http.StatusBadRequest)
				return
			}
			legacy := webhook.Verify(secret, b, r.Header.Get(jobs.HeaderSignature))
			standard := webhook.StandardVerify(secret, r.Header.Get(jobs.HeaderWebhookID), r.Header.Get(jobs.HeaderWebhookTime),
				r.Header.Get(jobs.HeaderWebhookSig), b, time.Now(), 5*time.Minute) == nil
			var delivery struct {
				Event struct {
					ID    int64  `json:"id"`
					Title string `json:"title"`
				} `json:"event"`
			}
			json.Unmarshal(b, &delivery) //nolint:errcheck
			ev := delivery.Event
			check := "signature ok"
			if !legacy || !standard {
				check = fmt.Sprintf("SIGNATURE MISMATCH (%s %v, webhook-signature %v)", jobs.HeaderSignature, legacy, standard)
			}
			answer := http.StatusOK
			fwd := ""
			if c.forward != "" {
				answer, fwd = forwardDelivery(r.Context(), forwardClient, c.forward, r.Header, b)
			}
			printMu <- struct{}{}
			fmt.Fprintf(out, "%s  delivery %s  %s  event %d %q  %s%s\n", time.Now().Format("15:04:05"),
				r.Header.Get(jobs.HeaderDelivery), r.Header.Get(jobs.HeaderEvent), ev.ID, ev.Title, check, fwd)
			<-printMu
			w.WriteHeader(answer)
		}),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx) //nolint:errcheck
	return nil
}

// forwardDelivery posts a delivery to url with its headers; it returns the
// status to answer the server with and a note for the printed line.
func forwardDelivery(ctx context.Context, client *http.Client, url string, h http.Header, body []byte) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return http.StatusBadGateway, "  -> forward failed: " + err.Error()
	}
	for name, vs := range h {
		switch strings.ToLower(name) {
		case "host", "content-length", "connection", "accept-encoding":
			continue
		}
		req.Header[name] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		return http.StatusBadGateway, "  -> forward failed: " + err.Error()
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) //nolint:errcheck
	resp.Body.Close()
	return resp.StatusCode, fmt.Sprintf("  -> %s %d", url, resp.StatusCode)
}

// serverMessage is the error message of a JSON error body, or the body.
func serverMessage(body []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return e.Error
	}
	return strings.TrimSpace(string(body))
}

// clientEnv fills the server URL and API key a client command (mcp,
// webhooks listen) was not given by flag from CRYPTOINTEL_URL and
// CRYPTOINTEL_API_KEY: flags win.
func (m *Main) clientEnv(url, key *string) {
	if *url == "" {
		*url = m.Getenv("CRYPTOINTEL_URL")
	}
	if *key == "" {
		*key = m.Getenv("CRYPTOINTEL_API_KEY")
	}
}
