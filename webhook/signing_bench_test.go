package webhook

import (
	"bytes"
	"testing"
	"time"
)

// A delivery body of about the size of one full event with evidence.
var benchBody = bytes.Repeat([]byte(`{"event_type":"radar","event":{"id":1,"title":"x"}}`), 40)

func BenchmarkSign(b *testing.B) {
	b.SetBytes(int64(len(benchBody)))
	b.ReportAllocs()
	for b.Loop() {
		Sign("whsec_benchmark-secret-0123456789", benchBody)
	}
}

func BenchmarkVerify(b *testing.B) {
	sig := Sign("whsec_benchmark-secret-0123456789", benchBody)
	b.SetBytes(int64(len(benchBody)))
	b.ReportAllocs()
	for b.Loop() {
		if !Verify("whsec_benchmark-secret-0123456789", benchBody, sig) {
			b.Fatal("signature does not verify")
		}
	}
}

func BenchmarkStandardSign(b *testing.B) {
	ts := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	b.SetBytes(int64(len(benchBody)))
	b.ReportAllocs()
	for b.Loop() {
		StandardSign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_1", ts, benchBody)
	}
}
