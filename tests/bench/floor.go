package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/wire"
)

// The floor: the least a Go server can do to answer /v1/latest?limit=25 —
// one pgx pool, three statements (the page of events, their owners and
// participants, their evidence) and encoding/json, producing the same
// envelope and event shape (canonical and legacy fields) as the service.
// No access layer, no metering, no GraphQL. It is benchmark code only, not
// a route of the service; the report divides the service's throughput by
// the floor's measured in the same run.

// floorMain serves the floor until SIGTERM: `bench floor -database-url U
// -addr A -max-conns N`. It prints "floor listening on ADDR" once bound.
func floorMain(args []string) error {
	fs := flag.NewFlagSet("floor", flag.ExitOnError)
	dbURL := fs.String("database-url", "", "benchmark database URL")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	maxConns := fs.Int("max-conns", 16, "pool size")
	fs.Parse(args) //nolint:errcheck
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(*dbURL)
	if err != nil {
		return fmt.Errorf("error parsing database url: %w", err)
	}
	cfg.MaxConns = int32(*maxConns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("error opening pool: %w", err)
	}
	defer pool.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("error listening: %w", err)
	}
	fmt.Fprintf(os.Stdout, "floor listening on %s\n", ln.Addr())
	mux := http.NewServeMux()
	mux.Handle("GET /v1/latest", &floorHandler{pool: pool})
	return (&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
}

type floorHandler struct{ pool *pgxpool.Pool }

// jsTime encodes as the service does: UTC, milliseconds, Z.
type jsTime time.Time

func (t jsTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format(wire.TimeLayout) + `"`), nil
}

type floorRef struct {
	ID      int64    `json:"id"`
	Label   string   `json:"label"`
	Type    string   `json:"type"`
	Aliases []string `json:"aliases"`
}

type floorEvidence struct {
	ID        int64  `json:"id"`
	Content   string `json:"content"`
	URL       string `json:"url"`
	Timestamp jsTime `json:"timestamp"`
}

type floorEvent struct {
	ID                      int64           `json:"id"`
	Title                   string          `json:"title"`
	EventCategory           string          `json:"eventCategory"`
	EventSubcategory        string          `json:"eventSubcategory"`
	Summary                 string          `json:"summary"`
	Bullets                 []string        `json:"bullets"`
	Owners                  []floorRef      `json:"owners"`
	Participants            []floorRef      `json:"participants"`
	Evidence                []floorEvidence `json:"evidence"`
	LatestEvidenceTimestamp jsTime          `json:"latestEvidenceTimestamp"`
	Significance            *float64        `json:"significance"`
	GlobalSummary           string          `json:"globalSummary"`
	BulletSummary           []string        `json:"bulletSummary"`
	EventOwner              []floorRef      `json:"eventOwner"`
	EventParticipants       []floorRef      `json:"eventParticipants"`
	Posts                   []floorEvidence `json:"posts"`
	LatestPostTimestamp     jsTime          `json:"latestPostTimestamp"`
	Signal                  *float64        `json:"signal"`
}

type floorEnvelope struct {
	Window string        `json:"window"`
	Sort   string        `json:"sort"`
	Mode   string        `json:"mode"`
	Limit  int           `json:"limit"`
	Offset int           `json:"offset"`
	Since  jsTime        `json:"since"`
	Data   []*floorEvent `json:"data"`
}

// ServeHTTP answers GET /v1/latest (limit bounded by
// cryptointel.EventsFirst; the default window; significance order) with
// three statements.
func (h *floorHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	limit := cryptointel.EventsFirst.Default
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			http.Error(w, `{"error":"limit must be an integer"}`, http.StatusBadRequest)
			return
		}
		limit = cryptointel.EventsFirst.ClampInt(n)
	}
	since := time.Now().Add(-cryptointel.EventWindows[0].Length).Truncate(time.Millisecond)
	env, err := h.latest(r.Context(), since, limit)
	if err != nil {
		http.Error(w, `{"error":"internal server error"}`, http.StatusInternalServerError)
		return
	}
	b, err := json.Marshal(env)
	if err != nil {
		http.Error(w, `{"error":"internal server error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b) //nolint:errcheck
}

func (h *floorHandler) latest(ctx context.Context, since time.Time, limit int) (*floorEnvelope, error) {
	env := &floorEnvelope{Window: cryptointel.DefaultEventWindow, Sort: "significance", Mode: "largest", Limit: limit, Since: jsTime(since), Data: []*floorEvent{}}
	rows, err := h.pool.Query(ctx, `
		SELECT id, title, category, subcategory, summary, bullets, significance, latest_evidence_at
		FROM events WHERE latest_evidence_at >= $1
		ORDER BY significance DESC NULLS LAST, latest_evidence_at DESC, id DESC
		LIMIT $2`, since, limit)
	if err != nil {
		return nil, err
	}
	byID := map[int64]*floorEvent{}
	ids := make([]int64, 0, limit)
	for rows.Next() {
		e := &floorEvent{Owners: []floorRef{}, Participants: []floorRef{}, Evidence: []floorEvidence{}}
		var at time.Time
		if err := rows.Scan(&e.ID, &e.Title, &e.EventCategory, &e.EventSubcategory, &e.Summary, &e.Bullets, &e.Significance, &at); err != nil {
			rows.Close()
			return nil, err
		}
		if e.Bullets == nil {
			e.Bullets = []string{}
		}
		e.LatestEvidenceTimestamp = jsTime(at)
		env.Data = append(env.Data, e)
		byID[e.ID] = e
		ids = append(ids, e.ID)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = h.pool.Query(ctx, `
		SELECT ee.event_id, ee.role, e.id, e.canonical_name, e.display_name, e.entity_type, e.aliases
		FROM event_entities ee JOIN entities e ON e.id = ee.entity_id
		WHERE ee.event_id = ANY($1)
		ORDER BY ee.event_id, ee.role, ee.position, ee.entity_id`, ids)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var (
			eventID           int64
			role, canon, disp string
			ref               floorRef
		)
		if err := rows.Scan(&eventID, &role, &ref.ID, &canon, &disp, &ref.Type, &ref.Aliases); err != nil {
			rows.Close()
			return nil, err
		}
		ref.Label = disp
		if ref.Label == "" {
			ref.Label = canon
		}
		if ref.Aliases == nil {
			ref.Aliases = []string{}
		}
		e := byID[eventID]
		if role == "owner" {
			e.Owners = append(e.Owners, ref)
		} else {
			e.Participants = append(e.Participants, ref)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = h.pool.Query(ctx, `
		SELECT event_id, id, content, url, ts FROM evidence
		WHERE event_id = ANY($1) ORDER BY event_id, ts DESC, id`, ids)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var (
			eventID int64
			ev      floorEvidence
			ts      time.Time
		)
		if err := rows.Scan(&eventID, &ev.ID, &ev.Content, &ev.URL, &ts); err != nil {
			rows.Close()
			return nil, err
		}
		ev.Timestamp = jsTime(ts)
		e := byID[eventID]
		e.Evidence = append(e.Evidence, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, e := range env.Data {
		e.GlobalSummary, e.BulletSummary = e.Summary, e.Bullets
		e.EventOwner, e.EventParticipants, e.Posts = e.Owners, e.Participants, e.Evidence
		e.LatestPostTimestamp, e.Signal = e.LatestEvidenceTimestamp, e.Significance
	}
	return env, nil
}
