package usage

import (
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func sample() []Event {
	at := time.Date(2026, 6, 15, 23, 59, 59, 123456000, time.UTC)
	return []Event{
		{RequestID: "r1", AccountID: "a", Environment: account.Live, Endpoint: "GET /v1/departures.json", Status: 200, Counted: true, Reason: ReasonCounted, At: at},
		{RequestID: "r2", AccountID: "a", Environment: account.Live, Endpoint: "GET /v1/departures.json", Status: 200, Counted: false, Reason: ReasonSession, At: at},
		{RequestID: "r3", AccountID: "b", Environment: account.Test, Endpoint: "POST /v6/ticketing/orders.json", Status: 503, Counted: false, Reason: ReasonFailed, At: at.Add(time.Second)},
		{RequestID: "r5", AccountID: "a", Environment: account.Live, Endpoint: "GET /v1/departures.json", Status: 429, Counted: false, Reason: ReasonRateLimited, At: at},
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
		{AccountID: "a", Environment: account.Live, Day: "2026-06-15", Endpoint: "GET /v1/departures.json", Counted: 1, Uncounted: 2, Refused: 1},
		{AccountID: "b", Environment: account.Test, Day: "2026-06-16", Endpoint: "POST /v6/ticketing/orders.json", Counted: 0, Uncounted: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Aggregate (-want +got):\n%s", d)
	}
	// The journal's rollup counts without decoding: the same refused count.
	tally, err := CountBatches(EncodeBatch(sample()))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, tally.Counts); d != "" {
		t.Errorf("CountBatches (-want +got):\n%s", d)
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
		ev[i] = sample()[i%len(sample())]
	}
	for b.Loop() {
		EncodeBatch(ev)
	}
}

// Batches stored back to back (a rolled-up journal segment) decode to
// their events in order, and CountBatches counts them as Aggregate does.
func TestConcatenatedBatches(t *testing.T) {
	in := sample()
	later := []Event{{RequestID: "r4", AccountID: "a", Environment: account.Live, Endpoint: "GET /v1/departures.json",
		Status: 200, Counted: true, Reason: ReasonCounted, At: time.Date(2026, 6, 16, 0, 0, 0, 0, time.UTC)}}
	data := append(EncodeBatch(in), EncodeBatch(later)...)
	data = append(data, EncodeBatch(nil)...)
	out, err := DecodeBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	all := append(append([]Event{}, in...), later...)
	if d := cmp.Diff(all, out); d != "" {
		t.Errorf("decode (-want +got):\n%s", d)
	}
	tally, err := CountBatches(data)
	if err != nil || tally.Events != len(all) || !tally.First.Equal(in[0].At) {
		t.Fatalf("CountBatches: %+v, %v", tally, err)
	}
	if d := cmp.Diff(Aggregate(all), tally.Counts); d != "" {
		t.Errorf("CountBatches (-Aggregate +got):\n%s", d)
	}
	if _, err := DecodeBatch(data[:len(data)-1]); err == nil {
		t.Error("a truncated record decoded")
	}
	if _, err := CountBatches(append(data, 7)); err == nil {
		t.Error("trailing garbage counted")
	}
}

// Whatever decodes is counted exactly as Aggregate counts its events (and
// compacts to the same events), and whatever does not decode is not counted
// either.
func FuzzCountBatches(f *testing.F) {
	f.Add(EncodeBatch(sample()))
	f.Add(append(EncodeBatch(sample()), EncodeBatch(sample()[1:])...))
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, derr := DecodeBatch(b)
		tally, cerr := CountBatches(b)
		counts, n := tally.Counts, tally.Events
		if (derr == nil) != (cerr == nil) {
			t.Fatalf("DecodeBatch err %v, CountBatches err %v", derr, cerr)
		}
		if derr != nil {
			return
		}
		if n != len(ev) || (n > 0 && !tally.First.Equal(ev[0].At)) {
			t.Fatalf("counted %d events from %v, decoded %d", n, tally.First, len(ev))
		}
		// Compact keeps the events and their tally.
		compact, ctally, err := Compact(b)
		if err != nil {
			t.Fatalf("Compact of decodable data: %v", err)
		}
		if again, err := DecodeBatch(compact); err != nil || !cmp.Equal(ev, again) {
			t.Fatalf("compacted batch decodes to other events: %v", err)
		}
		if !cmp.Equal(tally, ctally, cmpopts.EquateEmpty()) {
			t.Fatalf("Compact tally %+v, CountBatches %+v", ctally, tally)
		}
		want := Aggregate(ev)
		if len(want) == 0 && len(counts) == 0 {
			return
		}
		if d := cmp.Diff(want, counts); d != "" {
			t.Fatalf("(-Aggregate +CountBatches):\n%s", d)
		}
	})
}

// A journal segment (one frame per request, each with its own string
// table) compacts to one batch a third of its size with the same events.
func TestCompactSegment(t *testing.T) {
	var data []byte
	var all []Event
	for i := range 1000 {
		e := sample()[i%len(sample())]
		e.RequestID = fmt.Sprintf("%024x", i)
		all = append(all, e)
		data = append(data, EncodeBatch([]Event{e})...)
	}
	compact, tally, err := Compact(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBatch(compact)
	if err != nil || !cmp.Equal(all, got) {
		t.Fatalf("compacted events differ: %v", err)
	}
	if d := cmp.Diff(Aggregate(all), tally.Counts); d != "" || tally.Events != 1000 {
		t.Fatalf("tally of %d events (-Aggregate +got):\n%s", tally.Events, d)
	}
	if len(compact)*2 > len(data) {
		t.Fatalf("compacted %d bytes to %d", len(data), len(compact))
	}
	t.Logf("1000 one-row frames: %d bytes, compacted %d", len(data), len(compact))
}

// BenchmarkCompactSegment: what a rollup does per row of a journal
// segment (one frame per request, one account and endpoint under load):
// re-encode with one string table and tally.
func BenchmarkCompactSegment(b *testing.B) {
	var data []byte
	e := sample()[0]
	e.AccountID = "farebox-account-0d1f2e3c-4b5a-4687-9a0b-c1d2e3f40516"
	const rows = 10000
	for i := range rows {
		e.RequestID = fmt.Sprintf("%024x", i)
		data = AppendBatch(data, []Event{e})
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := Compact(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
}

// CountBatches adds up encoded batches (one or several back to back) the
// way Aggregate adds up their events, without decoding the events.
// The tally needs one string table for the whole walk, which Compact
// builds.
func CountBatches(data []byte) (Tally, error) {
	_, t, err := Compact(data)
	return t, err
}
