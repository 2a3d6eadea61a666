package ingest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
)

// parseNow is the server clock the parsing tests give ParseLine.
var parseNow = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// refusals are lines ParseLine refuses, with the reason its message gives.
var refusals = []struct {
	name, line, reason string
}{
	{"NotJSON", `nope`, "invalid JSON"},
	{"NoKind", `{"id":1}`, `missing "kind"`},
	{"EntityNoName", `{"kind":"entity","id":1}`, `"canonicalName" is required`},
	{"EntityBadID", `{"kind":"entity","id":0,"canonicalName":"x"}`, `"id" must be a positive integer`},
	{"EntityIDWrongType", `{"kind":"entity","id":"1","canonicalName":"x"}`, `field "id"`},
	{"SelfRelationship", `{"kind":"relationship","sourceEntityId":1,"targetEntityId":1,"relationshipType":"X"}`, "itself"},
	{"EventNoEvidence", `{"kind":"event","id":1,"title":"t","eventCategory":"c","owners":[1]}`, `"evidence" must hold`},
	{"EventNoOwners", `{"kind":"event","id":1,"title":"t","eventCategory":"c","evidence":[{"id":1,"timestamp":"2026-11-20T10:00:00Z"}]}`, `"owners" must name`},
	{"EventBadTime", `{"kind":"event","id":1,"title":"t","eventCategory":"c","owners":[1],"evidence":[{"id":1,"timestamp":"yesterday"}]}`, "invalid event"},
	{"EventDupEvidence", `{"kind":"event","id":1,"title":"t","eventCategory":"c","owners":[1],"evidence":[{"id":1,"timestamp":"2026-11-20T10:00:00Z"},{"id":1,"timestamp":"2026-11-20T10:00:00Z"}]}`, "duplicate evidence id 1"},
	{"EventContentType", `{"kind":"event","id":1,"title":"t","eventCategory":"c","owners":[1],"contentType":"video","evidence":[{"id":1,"timestamp":"2026-11-20T10:00:00Z"}]}`, `"contentType" must be one of`},
	{"MarketProbability", `{"kind":"market","id":1,"entityId":1,"question":"q","probability":1.5}`, `"probability" must be between 0 and 1`},
	{"MarketDupPost", `{"kind":"market","id":1,"entityId":1,"question":"q","subevents":[{"id":1,"posts":[{"id":1,"date":"2026-11-20T10:00:00Z"}]},{"id":2,"posts":[{"id":1,"date":"2026-11-20T10:00:00Z"}]}]}`, "duplicate post id 1"},
	{"ReferenceNoURL", `{"kind":"reference","id":1,"entityId":1}`, `"url" is required`},
	{"TwoValues", `{"kind":"entity","id":1,"canonicalName":"x"} {"kind":"entity"}`, "invalid JSON"},
	// Instants outside the bounds, publications in the future, absurd scores.
	{"EvidenceYear9999", `{"kind":"event","id":1,"title":"t","eventCategory":"c","owners":[1],"evidence":[{"id":1,"timestamp":"9999-12-31T00:00:00Z"}]}`,
		`evidence[0]: "timestamp" is in the future: at most 60 minutes after the server's clock are accepted`},
	{"EvidenceTwoHoursAhead", `{"kind":"event","id":1,"title":"t","eventCategory":"c","owners":[1],"evidence":[{"id":1,"timestamp":"2026-11-22T02:00:00Z"}]}`,
		`"timestamp" is in the future`},
	{"EvidenceYear0", `{"kind":"event","id":1,"title":"t","eventCategory":"c","owners":[1],"evidence":[{"id":1,"timestamp":"0000-06-01T00:00:00Z"}]}`,
		`evidence[0]: "timestamp" must be an instant between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z`},
	{"EvidenceYear1Plus14", `{"kind":"event","id":1,"title":"t","eventCategory":"c","owners":[1],"evidence":[{"id":1,"timestamp":"0001-01-01T00:00:00+14:00"}]}`,
		`"timestamp" must be an instant between`},
	{"SignificanceHuge", `{"kind":"event","id":1,"title":"t","eventCategory":"c","owners":[1],"significance":1e308,"evidence":[{"id":1,"timestamp":"2026-11-20T10:00:00Z"}]}`,
		`"significance" must be between 0 and 100`},
	{"SignificanceNegative", `{"kind":"event","id":1,"title":"t","eventCategory":"c","owners":[1],"significance":-0.5,"evidence":[{"id":1,"timestamp":"2026-11-20T10:00:00Z"}]}`,
		`"significance" must be between 0 and 100`},
	{"MarketPostFuture", `{"kind":"market","id":1,"entityId":1,"question":"q","subevents":[{"id":1,"posts":[{"id":1,"date":"9999-12-31T23:59:59Z"}]}]}`,
		`subevents[0].posts[0]: "date" is in the future`},
	{"MarketClosesYear0", `{"kind":"market","id":1,"entityId":1,"question":"q","closesAt":"0000-12-31T23:00:00Z"}`,
		`"closesAt" must be an instant between`},
}

func TestParseLine(t *testing.T) {
	t.Parallel()
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseLine([]byte(tc.line), parseNow)
			require.Error(t, err)
			require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err))
			require.Contains(t, cryptointel.ErrorMessage(err), tc.reason)
		})
	}

	t.Run("Defaults", func(t *testing.T) {
		t.Parallel()
		rec, err := ParseLine([]byte(`{"kind":"entity","id":7,"canonicalName":" Aave ","aliases":["AAVE"," ","AAVE","LEND"]}`), parseNow)
		require.NoError(t, err)
		require.Equal(t, KindEntity, rec.Kind)
		require.Equal(t, &Entity{Kind: "entity", ID: 7, CanonicalName: "Aave", DisplayName: "Aave", EntityType: "project", Status: "active", Aliases: []string{"AAVE", "LEND"}}, rec.Entity)

		rec, err = ParseLine([]byte(`{"kind":"event","id":1,"title":"t","eventCategory":"c","owners":[1],"significance":null,"contentType":"","latestEvidenceTimestamp":"2020-01-01T00:00:00Z","evidence":[{"id":1,"timestamp":"2026-11-20T10:00:00+02:00"}]}`), parseNow)
		require.NoError(t, err)
		require.Nil(t, rec.Event.Significance)
		require.Nil(t, rec.Event.ContentType)
		require.Nil(t, rec.Event.LatestEvidenceTimestamp)
		require.Equal(t, time.UTC, rec.Event.Evidence[0].Timestamp.Location())

		// The bounds themselves are accepted: a score of 0 or 100, evidence
		// just under an hour ahead, a market closing in year 9999.
		for _, line := range []string{
			`{"kind":"event","id":1,"title":"t","eventCategory":"c","owners":[1],"significance":0,"evidence":[{"id":1,"timestamp":"2026-11-22T00:59:59Z"}]}`,
			`{"kind":"event","id":1,"title":"t","eventCategory":"c","owners":[1],"significance":100,"evidence":[{"id":1,"timestamp":"0001-01-01T00:00:01Z"}]}`,
			`{"kind":"market","id":1,"entityId":1,"question":"q","closesAt":"9999-12-31T23:59:59Z"}`,
		} {
			_, err := ParseLine([]byte(line), parseNow)
			require.NoError(t, err, line)
		}
	})
}

// FuzzParseLine: whatever the line, ParseLine refuses it with an EINVALID
// error or returns a record with exactly the pointer its kind names.
func FuzzParseLine(f *testing.F) {
	for _, tc := range refusals {
		f.Add([]byte(tc.line))
	}
	for _, line := range []string{
		`{"kind":"entity","id":101,"canonicalName":"Ethereum","aliases":["ETH","Ether"]}`,
		`{"kind":"relationship","sourceEntityId":102,"targetEntityId":101,"relationshipType":"FOUNDATION_OF","searchExpand":true}`,
		`{"kind":"event","id":5001,"title":"t","eventCategory":"funding","owners":[101],"participants":[102],"evidence":[{"id":9001,"content":"c","url":"https://example.org/1","timestamp":"2026-11-20T10:00:00Z"}],"significance":7.5,"contentType":"research"}`,
		`{"kind":"reference","id":7002,"entityId":101,"title":"ethereum.org","url":"https://ethereum.org"}`,
		`{"kind":"market","id":8001,"entityId":101,"question":"q","outcomes":["Yes","No"],"probability":0.42,"subevents":[{"id":8101,"posts":[{"id":8201,"content":"c","date":"2026-11-20T12:00:00Z"}]}]}`,
	} {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := ParseLine(line, parseNow)
		if err != nil {
			require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err))
			return
		}
		// A good record has exactly the pointer its kind names.
		set := 0
		for _, p := range []bool{rec.Entity != nil, rec.Relationship != nil, rec.Event != nil, rec.Reference != nil, rec.Market != nil} {
			if p {
				set++
			}
		}
		require.Equal(t, 1, set)
		if rec.Event != nil {
			require.NotEmpty(t, rec.Event.Owners)
			require.NotEmpty(t, rec.Event.Evidence)
		}
	})
}
