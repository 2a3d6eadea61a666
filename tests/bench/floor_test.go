package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/wire"
)

// memberNames returns an object's member names in order.
func memberNames(t *testing.T, raw []byte) ([]string, map[string]json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	_, err := dec.Token()
	require.NoError(t, err)
	var names []string
	values := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		var v json.RawMessage
		require.NoError(t, dec.Decode(&v))
		names = append(names, tok.(string))
		values[tok.(string)] = v
	}
	return names, values
}

// tableNames are the members of an API object of the table: canonical
// names, then legacy aliases.
func tableNames(fields []wire.Field) []string {
	var names, legacy []string
	for _, f := range fields {
		names = append(names, f.Name)
		if f.Legacy != "" {
			legacy = append(legacy, f.Legacy)
		}
	}
	return append(names, legacy...)
}

// TestFloorEventShape holds the floor's hand-written event against the
// wire tables, so the floor keeps producing what the service produces.
func TestFloorEventShape(t *testing.T) {
	t.Parallel()
	sig := 1.5
	at := jsTime(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC))
	ref := floorRef{ID: 1, Label: "A", Type: "project", Aliases: []string{}}
	ev := floorEvidence{ID: 2, Content: "c", URL: "u", Timestamp: at}
	e := &floorEvent{ID: 3, Title: "t", Bullets: []string{}, Owners: []floorRef{ref}, Participants: []floorRef{ref},
		Evidence: []floorEvidence{ev}, LatestEvidenceTimestamp: at, Significance: &sig}
	e.GlobalSummary, e.BulletSummary, e.EventOwner, e.EventParticipants = e.Summary, e.Bullets, e.Owners, e.Participants
	e.Posts, e.LatestPostTimestamp, e.Signal = e.Evidence, e.LatestEvidenceTimestamp, e.Significance
	b, err := json.Marshal(e)
	require.NoError(t, err)
	names, values := memberNames(t, b)
	require.Equal(t, tableNames(wire.EventFields), names)
	var owners []json.RawMessage
	require.NoError(t, json.Unmarshal(values["owners"], &owners))
	names, _ = memberNames(t, owners[0])
	require.Equal(t, tableNames(wire.EntityRefFields), names)
	var evidence []json.RawMessage
	require.NoError(t, json.Unmarshal(values["evidence"], &evidence))
	names, _ = memberNames(t, evidence[0])
	require.Equal(t, tableNames(wire.EvidenceFields), names)
	require.Equal(t, `"2026-11-20T10:00:00.000Z"`, string(values["latestEvidenceTimestamp"]))
}
