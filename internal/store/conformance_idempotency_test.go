package store_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceIdempotency(t *testing.T) { idempotencyConformance.run(t) }

// idempotencyConformance: idempotency.go (the Idempotency-Key claims and
// answers; ClaimIdempotencyKey and CompleteIdempotencyKey are tested by
// TestIdempotencyClaims, the committed mark by TestIdempotencyClaimCommitted).
var idempotencyConformance = conformanceCases{
	"ReleaseIdempotencyKey": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		claimKey(f, "scope", "running", "h", fxAt)
		claimKey(f, "scope", "answered", "h", fxAt)
		claimKey(f, "scope", "committed", "h", fxAt)
		f.write(func(q store.Q) error {
			return q.CompleteIdempotencyKey(f.ctx, "scope", "answered", 201, "application/json", []byte(`{}`))
		})
		if err := s.WriteClaimed(f.ctx, idempotency.Claim{Scope: "scope", Key: "committed"}, func(store.Q) error { return nil }); err != nil {
			t.Fatal(err)
		}
		f.write(func(q store.Q) error {
			for _, k := range []string{"running", "answered", "committed", "unknown"} {
				if err := q.ReleaseIdempotencyKey(f.ctx, "scope", k); err != nil {
					return err
				}
			}
			return nil
		})
		// Released, a running claim may be claimed anew at once; an answer
		// and a committed request stay.
		for key, want := range map[string]bool{"running": true, "answered": false, "committed": false} {
			if ok, _ := claimKey(f, "scope", key, "h", fxAt.Add(time.Second)); ok != want {
				t.Errorf("claim of %s after ReleaseIdempotencyKey: %v, want %v", key, ok, want)
			}
		}
	},
	"PurgeIdempotencyKeys": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		claimKey(f, "scope", "old", "h", fxAt)
		claimKey(f, "scope", "new", "h", fxAt.Add(time.Hour))
		claimKey(f, store.KeptScopes+"daily", "2026-06-15", "h", fxAt) // a scheduled export's day, written: kept
		f.write(func(q store.Q) error {
			return q.CompleteIdempotencyKey(f.ctx, store.KeptScopes+"daily", "2026-06-15", 200, "application/json", []byte(`{}`))
		})
		var n int64
		f.write(func(q store.Q) (err error) { n, err = q.PurgeIdempotencyKeys(f.ctx, fxAt.Add(time.Minute)); return err })
		if n != 1 {
			t.Errorf("PurgeIdempotencyKeys removed %d, want 1", n)
		}
		for sk, want := range map[[2]string]bool{{"scope", "old"}: true, {"scope", "new"}: false, {store.KeptScopes + "daily", "2026-06-15"}: false} { // a purged key is new again
			if ok, _ := claimKey(f, sk[0], sk[1], "h", fxAt.Add(time.Hour)); ok != want {
				t.Errorf("claim of %v after the purge: %v, want %v", sk, ok, want)
			}
		}
	},
	"NewestIdempotencyKey": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		newest := func(scope string) string {
			t.Helper()
			k, err := f.read().NewestIdempotencyKey(f.ctx, scope)
			if err != nil {
				t.Fatal(err)
			}
			return k
		}
		if k := newest("days"); k != "" {
			t.Errorf("no keys: %q", k)
		}
		for _, day := range []string{"2026-06-15", "2026-06-17", "2026-06-16", "2026-06-18"} {
			claimKey(f, "days", day, "h", fxAt)
			if day != "2026-06-18" { // 18 June: claimed, not answered
				f.write(func(q store.Q) error {
					return q.CompleteIdempotencyKey(f.ctx, "days", day, 200, "application/json", []byte(`{}`))
				})
			}
		}
		claimKey(f, "other", "2027-01-01", "h", fxAt)
		f.write(func(q store.Q) error {
			return q.CompleteIdempotencyKey(f.ctx, "other", "2027-01-01", 200, "application/json", []byte(`{}`))
		})
		if k := newest("days"); k != "2026-06-17" {
			t.Errorf("newest answered day %q, want 2026-06-17", k)
		}
	},
	"AnswersNaming": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		answers := map[[2]string]string{
			{"acct:live", "k-body"}:          `{"customer_id":"cust-1"}`,
			{"acct:live", "k-none"}:          `{"customer_id":"cust-9"}`,
			{"acct:test", "k-other-scope"}:   `{"customer_id":"cust-1"}`,
			{"path:/v1/tickets/cust-2", "k"}: `{}`,
		}
		for sk, body := range answers {
			claimKey(f, sk[0], sk[1], "h", fxAt)
			f.write(func(q store.Q) error {
				return q.CompleteIdempotencyKey(f.ctx, sk[0], sk[1], 200, "application/json", []byte(body))
			})
		}
		claimKey(f, "acct:live", "k-running", "h", fxAt) // no answer yet
		got, err := f.read().AnswersNaming(f.ctx, "acct:live", []string{"cust-1", "cust-2"})
		slices.SortFunc(got, func(a, b idempotency.Answer) int { return strings.Compare(a.Scope+a.Key, b.Scope+b.Key) })
		want := []idempotency.Answer{{Scope: "acct:live", Key: "k-body", Body: []byte(answers[[2]string{"acct:live", "k-body"}])},
			{Scope: "path:/v1/tickets/cust-2", Key: "k", Body: []byte(`{}`)}}
		if d := cmp.Diff(want, got); err != nil || d != "" {
			t.Errorf("AnswersNaming (%v; -want +got):\n%s", err, d)
		}
		if got, err := f.read().AnswersNaming(f.ctx, "acct:live", nil); err != nil || len(got) != 0 {
			t.Errorf("AnswersNaming of no ids = %v, %v", got, err)
		}
	},
	"EraseAnswer": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		claimKey(f, "scope", "k", "h", fxAt)
		f.write(func(q store.Q) error {
			if err := q.CompleteIdempotencyKey(f.ctx, "scope", "k", 201, "application/json", []byte(`{"name":"Ä"}`)); err != nil {
				return err
			}
			return q.EraseAnswer(f.ctx, "scope", "k")
		})
		// Carried out, its answer gone: never claimed again, even after the lease.
		ok, rec := claimKey(f, "scope", "k", "h", fxAt.Add(48*time.Hour))
		if ok || rec.Status != 0 || !rec.Committed || rec.ContentType != store.ErasedAnswer || len(rec.Body) != 0 {
			t.Errorf("claim after EraseAnswer: %v %+v; want refused, committed, erased, no body", ok, rec)
		}
		if got, err := f.read().AnswersNaming(f.ctx, "scope", []string{"name"}); err != nil || len(got) != 0 {
			t.Errorf("AnswersNaming finds the erased answer: %v, %v", got, err)
		}
	},
}

// claimKey claims (scope, key) for request hash at at, with a minute's
// lease.
func claimKey(f *fixture, scope, key, hash string, at time.Time) (bool, idempotency.Record) {
	f.t.Helper()
	var ok bool
	var rec idempotency.Record
	f.write(func(q store.Q) (err error) {
		ok, rec, err = q.ClaimIdempotencyKey(f.ctx, scope, key, hash, at, time.Minute)
		return err
	})
	return ok, rec
}
