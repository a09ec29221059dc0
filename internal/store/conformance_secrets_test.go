package store_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/farebox/farebox/internal/usage"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceSecrets(t *testing.T) { secretsConformance.run(t) }

// secretsConformance: secrets.go (service secrets; EnsureSecret is tested by
// TestEnsureSecret), revocations.go (the revocation feed) and the ledger
// rows of usage.go (the ledger itself is tested by TestUsageLedger and
// the tests after it).
var secretsConformance = conformanceCases{
	"InsertServiceSecret": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		for i, c := range []struct {
			data string
			want bool
		}{{"first", true}, {"second", false}} { // another instance generated it first
			var inserted bool
			f.write(func(q store.Q) (err error) {
				inserted, err = q.InsertServiceSecret(f.ctx, "key/1", []byte(c.data), fxAt)
				return err
			})
			if inserted != c.want {
				t.Errorf("InsertServiceSecret #%d = %v, want %v", i+1, inserted, c.want)
			}
		}
		if got, err := f.read().ServiceSecrets(f.ctx, "key/"); err != nil || !cmp.Equal(got, map[string][]byte{"key/1": []byte("first")}) {
			t.Errorf("secrets = %s, %v; want the first value", got, err)
		}
	},
	"DeleteServiceSecret": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error {
			for _, n := range []string{"key/1", "key/2"} {
				if _, err := q.InsertServiceSecret(f.ctx, n, []byte(n), fxAt); err != nil {
					return err
				}
			}
			return nil
		})
		for i, want := range []bool{true, false} {
			var deleted bool
			f.write(func(q store.Q) (err error) { deleted, err = q.DeleteServiceSecret(f.ctx, "key/1"); return err })
			if deleted != want {
				t.Errorf("DeleteServiceSecret #%d = %v, want %v", i+1, deleted, want)
			}
		}
		if got, err := f.read().ServiceSecrets(f.ctx, ""); err != nil || !cmp.Equal(got, map[string][]byte{"key/2": []byte("key/2")}) {
			t.Errorf("secrets left = %s, %v", got, err)
		}
	},
	"ServiceSecrets": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error {
			for _, n := range []string{"inspection/2", "inspection/1", "session", "inspection"} {
				if _, err := q.InsertServiceSecret(f.ctx, n, []byte("v-"+n), fxAt); err != nil {
					return err
				}
			}
			return nil
		})
		want := map[string][]byte{"inspection/1": []byte("v-inspection/1"), "inspection/2": []byte("v-inspection/2")}
		if got, err := f.read().ServiceSecrets(f.ctx, "inspection/"); err != nil || !cmp.Equal(got, want) {
			t.Errorf("ServiceSecrets(inspection/) = %s, %v", got, err)
		}
		if got, err := f.read().ServiceSecrets(f.ctx, ""); err != nil || len(got) != 4 {
			t.Errorf("ServiceSecrets(\"\") = %s, %v; want all four", got, err)
		}
	},
	"AppendRevocation": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		seqs := revoke(f, ticketRevocation("t-1", fxAt), keyRevocation(7, fxAt), ticketRevocation("t-2", fxAt))
		if !cmp.Equal(seqs, []int64{1, 2, 3}) {
			t.Errorf("AppendRevocation numbers %v, want 1, 2, 3", seqs)
		}
		for what, r := range map[string]ticketing.Revocation{"the ticket again": ticketRevocation("t-1", fxAt), "the key again": keyRevocation(7, fxAt)} {
			err := s.Write(f.ctx, func(q store.Q) error { _, err := q.AppendRevocation(f.ctx, r); return err })
			wantCode(t, what, err, apperr.Conflict, store.CodeConflict)
		}
		// A refused entry gives its number back (its transaction rolled back).
		if seqs := revoke(f, ticketRevocation("t-3", fxAt)); !cmp.Equal(seqs, []int64{4}) {
			t.Errorf("next number %v, want 4", seqs)
		}
	},
	"Revocations": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		if rs, last, err := f.read().Revocations(f.ctx, 0, fxAt); err != nil || len(rs) != 0 || last != 0 {
			t.Errorf("Revocations of an empty feed = %v, %d, %v", rs, last, err)
		}
		t1, k7, t2 := ticketRevocation("t-1", fxAt), keyRevocation(7, fxAt.Add(48*time.Hour)), ticketRevocation("t-2", fxAt.Add(48*time.Hour))
		revoke(f, t1, k7, t2)
		t1.Seq, k7.Seq, t2.Seq = 1, 2, 3
		for _, c := range []struct {
			since     int64
			notBefore time.Time
			want      []ticketing.Revocation
		}{{0, fxAt, []ticketing.Revocation{t1, k7, t2}}, {1, fxAt, []ticketing.Revocation{k7, t2}}, {0, fxAt.Add(24 * time.Hour), []ticketing.Revocation{k7, t2}}} {
			rs, last, err := f.read().Revocations(f.ctx, c.since, c.notBefore)
			if d := cmp.Diff(c.want, rs); err != nil || d != "" || last != 3 {
				t.Errorf("Revocations(%d, %v) last %d (%v; -want +got):\n%s", c.since, c.notBefore, last, err, d)
			}
		}
	},
	"PruneRevocations": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		revoke(f, ticketRevocation("t-1", fxAt), keyRevocation(7, fxAt), ticketRevocation("t-2", fxAt.Add(48*time.Hour)))
		var n int64
		f.write(func(q store.Q) (err error) { n, err = q.PruneRevocations(f.ctx, fxAt.Add(25*time.Hour)); return err })
		if n != 2 {
			t.Errorf("PruneRevocations = %d, want the two ended", n)
		}
		rs, last, err := f.read().Revocations(f.ctx, 0, fxAt)
		if err != nil || len(rs) != 1 || rs[0].TicketID != "t-2" || last != 3 {
			t.Errorf("feed after pruning = %+v, last %d, %v; want t-2, numbering kept", rs, last, err)
		}
	},
	"KeyRevoked": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		revoke(f, keyRevocation(7, fxAt), ticketRevocation("7", fxAt))
		for kid, want := range map[uint16]bool{7: true, 8: false} {
			if got, err := f.read().KeyRevoked(f.ctx, kid); err != nil || got != want {
				t.Errorf("KeyRevoked(%d) = %v, %v; want %v", kid, got, err, want)
			}
		}
	},
	"InsertUsage": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		evs := usageEvents()
		f.write(func(q store.Q) error {
			if err := q.InsertUsage(f.ctx, nil); err != nil { // none: nothing written
				return err
			}
			return q.InsertUsage(f.ctx, evs)
		})
		got, err := f.read().UsageEvents(f.ctx, fxAt.Add(-time.Hour), fxAt.Add(time.Hour))
		if d := cmp.Diff(evs, got); err != nil || d != "" {
			t.Errorf("ledger rows after InsertUsage (%v; -want +got):\n%s", err, d)
		}
		rows, err := f.read().UsageSummary(f.ctx, fxAccount, "2026-11-02", "2026-11-02")
		want := []usage.Row{{AccountID: fxAccount, Day: "2026-11-02", Endpoint: "GET /v1/x", Counted: 1, Uncounted: 1}}
		if err != nil || !cmp.Equal(rows, want) {
			t.Errorf("counters after InsertUsage = %+v, %v; want %+v", rows, err, want)
		}
	},
	"UsageByRequest": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		evs := usageEvents()
		f.write(func(q store.Q) error { return q.InsertUsage(f.ctx, evs) })
		if got, err := f.read().UsageByRequest(f.ctx, "req-2"); err != nil || !cmp.Equal(got, evs[1:2]) {
			t.Errorf("UsageByRequest = %+v, %v; want %+v", got, err, evs[1:2])
		}
		if got, err := f.read().UsageByRequest(f.ctx, "req-x"); err != nil || len(got) != 0 {
			t.Errorf("UsageByRequest of an unknown request = %+v, %v", got, err)
		}
	},
}

func ticketRevocation(ticket string, validUntil time.Time) ticketing.Revocation {
	return ticketing.Revocation{TicketID: ticket, Kind: ticketing.RevocationRevoked, Reason: "lost", RevokedAt: fxAt, ValidUntil: validUntil}
}

func keyRevocation(kid uint16, validUntil time.Time) ticketing.Revocation {
	return ticketing.Revocation{KeyID: kid, Kind: ticketing.RevocationKey, Reason: "compromised", RevokedAt: fxAt, ValidUntil: validUntil}
}

// revoke appends rs to the feed, one transaction each, and returns their
// numbers.
func revoke(f *fixture, rs ...ticketing.Revocation) []int64 {
	f.t.Helper()
	var seqs []int64
	for _, r := range rs {
		f.write(func(q store.Q) error {
			seq, err := q.AppendRevocation(f.ctx, r)
			seqs = append(seqs, seq)
			return err
		})
	}
	return seqs
}

// usageEvents are two ledger rows of fxAccount at fxAt, one counted.
func usageEvents() []usage.Event {
	return []usage.Event{
		{RequestID: "req-1", AccountID: fxAccount, Environment: account.Live, Endpoint: "GET /v1/x", Status: 200, Counted: true, Reason: usage.ReasonCounted, At: fxAt},
		{RequestID: "req-2", AccountID: fxAccount, Environment: account.Test, Endpoint: "GET /v1/x", Status: 200, Reason: usage.ReasonSession, At: fxAt},
	}
}
