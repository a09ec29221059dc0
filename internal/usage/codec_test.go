package usage

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/google/go-cmp/cmp"
)

func sample() []Event {
	at := time.Date(2026, 6, 15, 23, 59, 59, 123456000, time.UTC)
	return []Event{
		{RequestID: "r1", AccountID: "a", Environment: account.Live, Endpoint: "GET /v1/departures.json", Status: 200, Counted: true, Reason: ReasonCounted, At: at},
		{RequestID: "r2", AccountID: "a", Environment: account.Live, Endpoint: "GET /v1/departures.json", Status: 200, Counted: false, Reason: ReasonSession, At: at},
		{RequestID: "r3", AccountID: "b", Environment: account.Test, Endpoint: "POST /v6/ticketing/orders.json", Status: 503, Counted: false, Reason: ReasonFailed, At: at.Add(time.Second)},
	}
}

func TestBatchRoundTrip(t *testing.T) {
	in := sample()
	out, err := DecodeBatch(EncodeBatch(in))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, out); d != "" {
		t.Errorf("round trip (-in +out):\n%s", d)
	}
	if _, err := DecodeBatch(EncodeBatch(nil)); err != nil {
		t.Errorf("empty batch: %v", err)
	}
}

func TestAggregate(t *testing.T) {
	got := Aggregate(sample())
	want := []Count{
		{AccountID: "a", Environment: account.Live, Day: "2026-06-15", Endpoint: "GET /v1/departures.json", Counted: 1, Uncounted: 1},
		{AccountID: "b", Environment: account.Test, Day: "2026-06-16", Endpoint: "POST /v6/ticketing/orders.json", Counted: 0, Uncounted: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Aggregate (-want +got):\n%s", d)
	}
}

func FuzzDecodeBatch(f *testing.F) {
	f.Add(EncodeBatch(sample()))
	f.Add([]byte{1, 0, 0})
	f.Add([]byte{1, 255, 255, 255, 255, 15})
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := DecodeBatch(b)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode to something that decodes to the same events.
		again, err := DecodeBatch(EncodeBatch(ev))
		if err != nil || !cmp.Equal(ev, again) {
			t.Fatalf("re-encoding changed events: %v", err)
		}
	})
}

func BenchmarkEncodeBatch(b *testing.B) {
	ev := make([]Event, 64)
	for i := range ev {
		ev[i] = sample()[i%3]
	}
	for b.Loop() {
		EncodeBatch(ev)
	}
}
