package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel/webhook"
)

// webhookReceiver is the harness's HTTPS endpoint for the soak webhook: it
// checks each delivery's signature and records when each event arrived.
type webhookReceiver struct {
	srv    *httptest.Server
	caFile string

	mu      sync.Mutex
	secret  string
	sent    map[int64]time.Time // event id → when its ingest was sent
	got     map[int64]time.Time // event id → first delivery
	dups    int                 // deliveries of an event already received
	badSig  int
	unknown int // deliveries of events this run did not ingest
}

// startReceiver starts the TLS receiver and writes its certificate where
// the server can trust it (WEBHOOK_CA_FILE).
func startReceiver(dir string) (*webhookReceiver, error) {
	r := &webhookReceiver{sent: map[int64]time.Time{}, got: map[int64]time.Time{}}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(r.serve))
	r.caFile = filepath.Join(dir, "soak-webhook-ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})
	if err := os.WriteFile(r.caFile, pemBytes, 0o600); err != nil {
		r.srv.Close()
		return nil, fmt.Errorf("error writing the webhook receiver's certificate: %w", err)
	}
	return r, nil
}

func (r *webhookReceiver) close() { r.srv.Close() }

func (r *webhookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, "read error", http.StatusBadRequest)
		return
	}
	var d struct {
		EventType string `json:"event_type"`
		Event     struct {
			ID int64 `json:"id"`
		} `json:"event"`
	}
	jsonErr := json.Unmarshal(body, &d)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.secret == "" || !webhook.Verify(r.secret, body, req.Header.Get("X-Service-Signature")) || jsonErr != nil {
		r.badSig++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	_, seen := r.got[d.Event.ID]
	switch {
	case seen:
		r.dups++
	default:
		if _, ok := r.sent[d.Event.ID]; !ok {
			r.unknown++
		}
		r.got[d.Event.ID] = time.Now()
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *webhookReceiver) deliveredCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for id := range r.sent {
		if _, ok := r.got[id]; ok {
			n++
		}
	}
	return n
}

// deliveryFigures are the webhook's figures at the end of the run.
type deliveryFigures struct {
	ingested, delivered, dups, badSig, unknown int
	maxLag, medianLag                          time.Duration
}

func (r *webhookReceiver) figures() deliveryFigures {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := deliveryFigures{ingested: len(r.sent), dups: r.dups, badSig: r.badSig, unknown: r.unknown}
	var lags []time.Duration
	for id, sent := range r.sent {
		if got, ok := r.got[id]; ok {
			f.delivered++
			lags = append(lags, max(0, got.Sub(sent)))
		}
	}
	slices.Sort(lags)
	if len(lags) > 0 {
		f.maxLag, f.medianLag = lags[len(lags)-1], pctOf(lags, 0.5)
	}
	return f
}

// soakWriter registers the soak webhook, ingests new events on each tick
// and deletes the webhook at the end.
type soakWriter struct {
	client    *http.Client
	base      string
	token     string
	fx        *fixtures
	recv      *webhookReceiver
	n         int
	key       string
	webhookID int64
	nextEvent int64
	nextEvid  int64
	seq       int
}

// setup removes webhooks left by earlier runs, picks ids above every
// stored event and evidence id, and registers the soak webhook through
// the API.
func (w *soakWriter) setup(ctx context.Context, stats *pgx.Conn) error {
	if _, err := stats.Exec(ctx, `DELETE FROM webhooks WHERE account_id IN (SELECT id FROM accounts WHERE name = $1 OR name LIKE $1 || '-%')`, benchAccount); err != nil {
		return fmt.Errorf("error deleting earlier soak webhooks: %w", err)
	}
	// Ids stay below 2^31: GraphQL's Int is 32-bit.
	if err := stats.QueryRow(ctx, `SELECT greatest(1000000000, (SELECT coalesce(max(id), 0) FROM events) + 1),
		greatest(1000000000, (SELECT coalesce(max(id), 0) FROM evidence) + 1)`).Scan(&w.nextEvent, &w.nextEvid); err != nil {
		return fmt.Errorf("error reading the next event ids: %w", err)
	}
	w.key = w.fx.keys.get()
	body := fmt.Sprintf(`{"url":%q,"event_types":["radar","signal"]}`, w.recv.srv.URL+"/soak")
	var created struct {
		Data struct {
			ID     int64  `json:"id"`
			Secret string `json:"secret"`
		} `json:"data"`
	}
	status, err := w.do(ctx, http.MethodPost, "/v1/webhooks", "Bearer "+w.key, "application/json", strings.NewReader(body), &created)
	if err != nil || status != http.StatusCreated || created.Data.Secret == "" {
		return fmt.Errorf("error registering the soak webhook: status %d: %v", status, err)
	}
	w.recv.mu.Lock()
	w.recv.secret = created.Data.Secret
	w.recv.mu.Unlock()
	w.webhookID = created.Data.ID
	log.Printf("webhook %d registered for %s", w.webhookID, w.recv.srv.URL)
	return nil
}

// write ingests w.n new scored events through POST /admin/ingest and
// returns "" or what went wrong.
func (w *soakWriter) write(ctx context.Context) string {
	var lines bytes.Buffer
	now := time.Now().UTC()
	ids := make([]int64, w.n)
	for i := range ids {
		w.seq++
		ids[i] = w.nextEvent
		owner := w.fx.entityIDs[w.seq%len(w.fx.entityIDs)]
		name := w.fx.names[w.seq%len(w.fx.names)]
		line, err := json.Marshal(map[string]any{
			"kind": "event", "id": w.nextEvent,
			"title":         fmt.Sprintf("%s ships soak upgrade %d", name, w.seq),
			"eventCategory": "upgrade", "eventSubcategory": "mainnet",
			"summary": fmt.Sprintf("%s rolled out upgrade %d to mainnet.", name, w.seq),
			"bullets": []string{"Mainnet upgrade", "No downtime"},
			"owners":  []int64{owner},
			"evidence": []map[string]any{{"id": w.nextEvid, "content": fmt.Sprintf("Upgrade %d is live", w.seq),
				"url": fmt.Sprintf("https://soak.example/%d", w.nextEvent), "timestamp": now.Format(time.RFC3339)}},
			"significance": 5 + float64(w.seq%40)/10,
		})
		if err != nil {
			return err.Error()
		}
		lines.Write(line)
		lines.WriteByte('\n')
		w.nextEvent++
		w.nextEvid++
	}
	w.recv.mu.Lock()
	for _, id := range ids {
		w.recv.sent[id] = time.Now()
	}
	w.recv.mu.Unlock()
	var sum struct {
		EventsChanged int `json:"eventsChanged"`
		FailedCount   int `json:"failedCount"`
		Failed        []struct {
			Reason string `json:"reason"`
		} `json:"failed"`
	}
	status, err := w.do(ctx, http.MethodPost, "/admin/ingest", "Bearer "+w.token, "application/x-ndjson", &lines, &sum)
	switch {
	case err != nil:
		return "POST /admin/ingest: " + err.Error()
	case status != http.StatusOK:
		return fmt.Sprintf("POST /admin/ingest: %d", status)
	case sum.FailedCount > 0:
		return fmt.Sprintf("POST /admin/ingest: %d failed lines (%s)", sum.FailedCount, sum.Failed[0].Reason)
	case sum.EventsChanged != w.n:
		return fmt.Sprintf("POST /admin/ingest: %d events changed, want %d", sum.EventsChanged, w.n)
	}
	return ""
}

// finish waits up to grace for every ingested event's delivery, deletes
// the webhook through the API and reports whether all went well.
func (w *soakWriter) finish(ctx context.Context, grace time.Duration, counts *soakCounts) bool {
	deadline := time.Now().Add(grace)
	for {
		f := w.recv.figures()
		if f.delivered == f.ingested || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	f := w.recv.figures()
	log.Printf("webhook: %d of %d ingested events delivered (median lag %s, max %s), %d duplicates, %d bad signatures",
		f.delivered, f.ingested, ms(f.medianLag), ms(f.maxLag), f.dups, f.badSig)
	status, err := w.do(ctx, http.MethodDelete, "/v1/webhooks/"+strconv.FormatInt(w.webhookID, 10), "Bearer "+w.key, "", nil, nil)
	if err != nil || status/100 != 2 {
		counts.write(fmt.Sprintf("DELETE /v1/webhooks/{id}: status %d: %v", status, err))
		return false
	}
	return f.delivered == f.ingested && f.badSig == 0 && f.unknown == 0
}

// do sends one request of the writer and decodes a JSON answer into out.
func (w *soakWriter) do(ctx context.Context, method, path, auth, contentType string, body io.Reader, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, w.base+path, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", auth)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("error decoding %s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}
