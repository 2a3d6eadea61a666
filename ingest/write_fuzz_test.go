package ingest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cryptointel/cryptointel"
)

// FuzzIngestLineRecord parses arbitrary lines (hostile seeds: NUL, invalid UTF-8, overflow, trailing data). It must never panic; a
// refusal is an EINVALID *Error with a reason; an accepted line is of a
// known kind with exactly that kind's record set, positive ids, and keys
// and entity references that can be computed.
func FuzzIngestLineRecord(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `[]`, `null`, `{"kind":"entity"}`, `{"kind":"bogus"}`, `{"kind":1}`,
		`{"kind":"entity","id":101,"canonicalName":"Ethereum","aliases":["ETH"," ETH ",""]}`,
		`{"kind":"entity","id":-1,"canonicalName":"x"}`,
		`{"kind":"entity","id":1,"canonicalName":"a\u0000b"}`,
		`{"kind":"entity","id":99999999999999999999,"canonicalName":"x"}`,
		`{"kind":"relationship","sourceEntityId":102,"targetEntityId":101,"relationshipType":"FOUNDATION_OF"}`,
		`{"kind":"relationship","sourceEntityId":1,"targetEntityId":1,"relationshipType":"SELF"}`,
		`{"kind":"event","id":5000,"title":"t","eventCategory":"partnership","summary":"s","bullets":["a"],"owners":[101],"participants":[],"evidence":[{"id":1,"content":"c","url":"https://x","timestamp":"2026-11-20T10:00:00Z"}],"significance":1.5}`,
		`{"kind":"event","id":5000,"title":"t","owners":[],"evidence":[]}`,
		`{"kind":"event","id":5000,"title":"t","owners":[1],"evidence":[{"id":1,"timestamp":"not a time"}]}`,
		`{"kind":"event","id":5000,"title":"t","owners":[1],"significance":"NaN"}`,
		`{"kind":"reference","id":7002,"entityId":101,"title":"ethereum.org","url":"https://ethereum.org"}`,
		`{"kind":"market","id":8001,"entityId":101,"question":"q","outcomes":["Yes","No"],"probability":1.5,"subevents":[{"id":1,"posts":[{"id":2,"date":"2026-11-19T12:00:00Z"}]}]}`,
		`{"kind":"entity","id":1,"canonicalName":"x","extra":true}`,
		`{"kind":"entity","id":1,"canonicalName":"x"} {"kind":"entity"}`,
		"{\"kind\":\"entity\",\"id\":1,\"canonicalName\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	kinds := map[string]func(Record) bool{
		KindEntity:       func(r Record) bool { return r.Entity != nil },
		KindRelationship: func(r Record) bool { return r.Relationship != nil },
		KindEvent:        func(r Record) bool { return r.Event != nil },
		KindReference:    func(r Record) bool { return r.Reference != nil },
		KindMarket:       func(r Record) bool { return r.Market != nil },
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := ParseLine(line, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
		if err != nil {
			var e *cryptointel.Error
			if !errors.As(err, &e) || e.Code != cryptointel.EINVALID || e.Message == "" {
				t.Fatalf("refusal of %q is not an EINVALID error with a reason: %#v", line, err)
			}
			return
		}
		has, ok := kinds[rec.Kind]
		if !ok || !slices.Contains(Kinds, rec.Kind) || !has(rec) {
			t.Fatalf("accepted %q as kind %q without its record", line, rec.Kind)
		}
		set := 0
		for _, p := range []bool{rec.Entity != nil, rec.Relationship != nil, rec.Event != nil, rec.Reference != nil, rec.Market != nil} {
			if p {
				set++
			}
		}
		if set != 1 {
			t.Fatalf("accepted %q with %d records set", line, set)
		}
		switch {
		case rec.Entity != nil && rec.Entity.ID <= 0,
			rec.Event != nil && rec.Event.ID <= 0,
			rec.Reference != nil && rec.Reference.ID <= 0,
			rec.Market != nil && rec.Market.ID <= 0:
			t.Fatalf("accepted a non-positive id in %q", line)
		}
		for _, ref := range rec.EntityRefs() {
			_ = ref
		}
		_ = recordKeys(rec)
	})
}
