package db

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/wire"
)

// PollerChannel is the PostgreSQL NOTIFY channel ingest signals after
// committing events; the webhook poller LISTENs on it.
const PollerChannel = "cryptointel_events"

// MsgEventNotFound is the error of an unknown event id.
const MsgEventNotFound = "Event not found"

// WebhookEventByID builds the pushed form of event id from its rows: the
// event, its owners and participants (in position order) and its evidence
// (newest first). An entity's label is its display name, or its canonical
// name when that is empty. Returns ENOTFOUND when the event does not exist.
func WebhookEventByID(ctx context.Context, q Querier, id int64) (*wire.Event, error) {
	evs, err := EventsByIDs(ctx, q, []int64{id})
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, &cryptointel.Error{Code: cryptointel.ENOTFOUND, Message: MsgEventNotFound}
	}
	ev := evs[0]
	refs, err := EntitiesByEventIDs(ctx, q, []int64{id})
	if err != nil {
		return nil, err
	}
	evidence, err := EvidenceByEventIDs(ctx, q, []int64{id})
	if err != nil {
		return nil, err
	}
	out := &wire.Event{Owners: []wire.EntityRef{}, Participants: []wire.EntityRef{}, Evidence: make([]wire.Evidence, 0, len(evidence))}
	wireEvent(out, ev)
	for _, r := range refs {
		var ref wire.EntityRef
		wireEntityRef(&ref, r.Entity)
		if ref.Label == "" {
			ref.Label = r.Entity.CanonicalName
		}
		cryptointel.AppendByRole(&out.Owners, &out.Participants, r.Role, ref)
	}
	for _, e := range evidence {
		var v wire.Evidence
		wireEvidence(&v, e)
		out.Evidence = append(out.Evidence, v)
	}
	return out, nil
}

// ListenEvents LISTENs on PollerChannel on a dedicated connection and calls
// fn for every notification until ctx is done. A lost connection is
// re-established after a short pause (fn is then called once, since
// notifications may have been missed). It returns ctx's error.
//
// The connection is the pool's only while it is opened: it is then taken
// out of the pool (hijacked), as River's listener's is, so it neither
// takes one of the pool's MaxConns for good nor counts among the pool's
// connections in use, whose figure would otherwise change when, some time
// after the server starts, the listener has connected.
func (d *DB) ListenEvents(ctx context.Context, fn func()) error {
	for {
		err := d.listenOnce(ctx, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		_ = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		fn()
	}
}

func (d *DB) listenOnce(ctx context.Context, fn func()) error {
	pooled, err := d.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("error acquiring listen connection: %w", err)
	}
	// The connection carries a LISTEN; it leaves the pool at once, for
	// good, and is closed when the listen ends.
	conn := pooled.Hijack()
	defer conn.Close(context.Background()) //nolint:errcheck
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{PollerChannel}.Sanitize()); err != nil {
		return fmt.Errorf("error listening: %w", err)
	}
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return fmt.Errorf("error waiting for notification: %w", err)
		}
		fn()
	}
}

// NotifyEvents signals PollerChannel, as ingest does after committing.
func (d *DB) NotifyEvents(ctx context.Context) error {
	if _, err := d.Pool.Exec(ctx, "SELECT pg_notify($1, '')", PollerChannel); err != nil {
		return fmt.Errorf("error notifying: %w", err)
	}
	return nil
}
