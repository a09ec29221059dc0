package privacy_test

import (
	"context"
	"errors"
	"github.com/farebox/farebox/internal/app/books"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/privacy"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/retention"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestRunRetentionErasesWhatIsPast: a run erases exactly what is past
// each retention class and keeps the rest: the identification data of
// tickets whose validity ended more than the period ago (not of a recent
// one), the postal code of an ended subscription's coupon, the personal
// data of the oldest kept event, and a restricted customer only once its
// duty has ended. A dry run before it counts the same and changes nothing;
// a second run finds nothing.
func TestRunRetentionErasesWhatIsPast(t *testing.T) {
	eachEngine(t, privacy.Options{}, func(t *testing.T, b *bed) {
		// A month of the subscription, cancelled at once (it ends with
		// July), and a customer restricted to its invoice's duty.
		month := b.order(t, true).Coupons[0]
		if _, err := b.app.CancelSubscription(b.ctx, idempotency.Claim{}, b.live, *month.SubscriptionID); err != nil {
			t.Fatal(err)
		}
		monthC, monthT := b.activate(t, month.ID, "Monat")
		billed := b.customer(t, "Muster GmbH")
		b.invoiced(t, billed.ID)
		if _, err := b.priv.Erase(b.ctx, idempotency.Claim{}, b.live, privacy.SubjectCustomer, billed.ID); err != nil {
			t.Fatal(err)
		}
		// In August the subscription has ended (subscription.ended); then a
		// single ticket, whose ticket.issued stays the account's newest event.
		b.clock.Advance(56 * 24 * time.Hour)
		if _, _, err := b.events.Maintain(b.ctx); err != nil {
			t.Fatal(err)
		}
		oldC, old := b.ticketFor(t, "Alt", false)
		if r, err := b.priv.RunRetention(b.ctx, false); err != nil || r.Tickets+r.Coupons+r.Customers+r.Events != 0 {
			t.Fatalf("nothing is due yet: %+v %v", r, err)
		}

		// 250 days later events older than event.Retention are pruned (the
		// newest is kept), and a new ticket is issued.
		b.clock.Advance(250 * 24 * time.Hour)
		if _, _, err := b.events.Maintain(b.ctx); err != nil {
			t.Fatal(err)
		}
		_, fresh := b.ticketFor(t, "Neu", false)
		b.clock.Advance(time.Hour)

		dry, err := b.priv.RunRetention(b.ctx, true)
		if err != nil || !dry.DryRun || dry.Due.Tickets != 2 || dry.Due.Coupons != 1 || dry.Due.Customers != 0 || dry.Batches != 0 {
			t.Fatalf("dry run: %+v %v", dry, err)
		}
		if !dry.Due.OldestTicket.Equal(monthT.ValidUntil) || !dry.IdentificationCutoff.Equal(b.clock.Now().Add(-retention.Default().Identification)) {
			t.Fatalf("dry run: oldest ticket %v (want %v), cutoff %v", dry.Due.OldestTicket, monthT.ValidUntil, dry.IdentificationCutoff)
		}
		if tk := b.ticket(t, old.ID); !strings.Contains(string(tk.IdentificationMedium), "Alt") || tk.MediumHash == store.ErasedMediumHash {
			t.Fatalf("the dry run changed a ticket: %s", tk.IdentificationMedium)
		}
		if c := b.coupon(t, monthC.ID); string(c.TariffSettings) != berlinTariff {
			t.Fatalf("the dry run changed a coupon: %s", c.TariffSettings)
		}
		if kept := b.eventsAbout(t, old.ID, oldC.ID); !strings.Contains(kept, "Alt") {
			t.Fatalf("the kept event holds no personal data (the test misses redaction): %s", kept)
		}

		r, err := b.priv.RunRetention(b.ctx, false)
		if err != nil || r.DryRun || r.Due.Tickets != 2 || r.Due.Coupons != 1 || r.Tickets != 2 || r.Coupons != 1 || r.Customers != 0 || r.Events != 1 {
			t.Fatalf("run: %+v %v", r, err)
		}
		for _, id := range []string{old.ID, monthT.ID} {
			if tk := b.ticket(t, id); tk.MediumHash != store.ErasedMediumHash || strings.Contains(string(tk.IdentificationMedium), "Fahrgast") || tk.TariffSettings != nil {
				t.Errorf("expired ticket %s not erased: %s %s", id, tk.IdentificationMedium, tk.TariffSettings)
			}
		}
		if tk := b.ticket(t, fresh.ID); !strings.Contains(string(tk.IdentificationMedium), "Neu") {
			t.Errorf("a ticket within its period was erased: %s", tk.IdentificationMedium)
		}
		if c := b.coupon(t, monthC.ID); c.TariffSettings != nil {
			t.Errorf("the ended subscription's postal code is kept: %s", c.TariffSettings)
		}
		if kept := b.eventsAbout(t, old.ID, oldC.ID); strings.Contains(kept, "Alt") {
			t.Errorf("the kept event still holds the medium: %s", kept)
		}
		if c := b.storedCustomer(t, billed.ID); c.AddressLines[0] != "Muster GmbH" || c.RestrictedUntil == nil {
			t.Errorf("a customer within its duty was erased: %v", c.AddressLines)
		}
		if r, err := b.priv.RunRetention(b.ctx, false); err != nil || r.Tickets+r.Coupons+r.Customers+r.Events != 0 {
			t.Fatalf("second run: %+v %v", r, err)
		}

		// The invoice's duty ends with 2034: then the customer goes.
		b.clock.Set(time.Date(2035, 1, 2, 0, 0, 0, 0, time.UTC))
		r, err = b.priv.RunRetention(b.ctx, false)
		if err != nil || r.Due.Customers != 1 || r.Customers != 1 {
			t.Fatalf("run after the duty: %+v %v", r, err)
		}
		if c := b.storedCustomer(t, billed.ID); strings.Join(c.AddressLines, "|") != retention.ErasedName || c.RestrictedUntil != nil {
			t.Errorf("after the duty: %v %v", c.AddressLines, c.RestrictedUntil)
		}
		// The books' chain (the invoice, its audit entries, the receipt)
		// still verifies after the erasures (docs/books.md).
		if rep, err := b.books.Verify(b.ctx, books.VerifyOptions{}); err != nil || len(rep.Findings) != 0 || rep.Entries < 3 {
			t.Errorf("books after retention: %+v %v", rep, err)
		}
	})
}

// TestRunRetentionBatches: a run works in transactions of at most Batch
// rows, one more for the last partial batch of each class, and counts them.
func TestRunRetentionBatches(t *testing.T) {
	eachEngine(t, privacy.Options{Batch: 2, Yield: -1}, func(t *testing.T, b *bed) {
		for range 5 {
			b.ticketFor(t, "Alt", false)
		}
		b.clock.Advance(200 * 24 * time.Hour)
		r, err := b.priv.RunRetention(b.ctx, false)
		// tickets 2+2+1, coupons 0, customers 0
		if err != nil || r.Tickets != 5 || r.Batches != 5 {
			t.Fatalf("run: %+v %v", r, err)
		}
		if r, err = b.priv.RunRetention(b.ctx, false); err != nil || r.Tickets != 0 || r.Batches != 3 {
			t.Fatalf("second run: %+v %v", r, err)
		}
	})
}

// spans records the write transactions of a run (start and end) and can
// cancel the run's context after the nth.
type spans struct {
	privacy.DB
	mu       sync.Mutex
	writes   [][2]time.Time
	cancelAt int
	cancel   context.CancelFunc
}

func (s *spans) Write(ctx context.Context, fn func(q privacy.Queries) error) error {
	t0 := time.Now()
	err := s.DB.Write(ctx, fn)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, [2]time.Time{t0, time.Now()})
	if len(s.writes) == s.cancelAt {
		s.cancel()
	}
	return err
}

// TestRunRetentionYields: after each full batch the run pauses Yield times
// as long as the batch took before its next transaction, and a pause ends
// when the run's context does.
func TestRunRetentionYields(t *testing.T) {
	for _, e := range storetest.Engines {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var w *spans
			b := newBed(t, e, privacy.Options{Batch: 1, Yield: 2}, func(db privacy.DB) privacy.DB {
				w = &spans{DB: db, cancel: cancel}
				return w
			})
			for range 3 {
				b.ticketFor(t, "Alt", false)
			}
			b.clock.Advance(200 * 24 * time.Hour)
			r, err := b.priv.RunRetention(ctx, false)
			if err != nil || r.Tickets != 3 || len(w.writes) != r.Batches {
				t.Fatalf("run: %+v %v, %d writes", r, err, len(w.writes))
			}
			for i := range 3 { // the three full ticket batches
				took := w.writes[i][1].Sub(w.writes[i][0])
				if gap := w.writes[i+1][0].Sub(w.writes[i][1]); gap < 2*took {
					t.Errorf("after full batch %d (%s) the next began %s later, want at least twice as long", i+1, took, gap)
				}
			}

			b.clock.Advance(200 * 24 * time.Hour)
			for range 2 {
				b.ticketFor(t, "Alt", false)
			}
			b.clock.Advance(200 * 24 * time.Hour)
			w.writes, w.cancelAt = nil, 1
			b.priv = privacy.New(w, b.clock, privacy.Options{Batch: 1, Yield: 1e6}, nil)
			r, err = b.priv.RunRetention(ctx, false)
			if !errors.Is(err, context.Canceled) || r.Batches != 1 || r.Tickets != 1 {
				t.Fatalf("cancelled during the pause: %+v %v", r, err)
			}
		})
	}
}

// TestDailyRetention: one instance claims the daily run and runs it; until
// Interval has passed since its start no one runs it again.
func TestDailyRetention(t *testing.T) {
	eachEngine(t, privacy.Options{}, func(t *testing.T, b *bed) {
		_, old := b.ticketFor(t, "Alt", false)
		b.clock.Advance(200 * 24 * time.Hour)
		r, ran, err := b.priv.DailyRetention(b.ctx)
		if err != nil || !ran || r.Tickets != 1 {
			t.Fatalf("first daily run: %+v %v %v", r, ran, err)
		}
		if tk := b.ticket(t, old.ID); tk.MediumHash != store.ErasedMediumHash {
			t.Fatalf("the daily run did not erase: %s", tk.IdentificationMedium)
		}
		other := privacy.New(store.NewView[privacy.Queries](b.store), b.clock, privacy.Options{}, nil) // another instance
		for _, step := range []time.Duration{0, privacy.Interval - time.Second} {
			b.clock.Advance(step)
			if r, ran, err := other.DailyRetention(b.ctx); err != nil || ran || r.Batches != 0 {
				t.Fatalf("%s after the run: ran %v %+v %v", step, ran, r, err)
			}
		}
		b.clock.Advance(time.Second)
		if _, ran, err := other.DailyRetention(b.ctx); err != nil || !ran {
			t.Fatalf("a day after the run: ran %v %v", ran, err)
		}
		if _, ran, err := b.priv.DailyRetention(b.ctx); err != nil || ran {
			t.Fatalf("the same day again: ran %v %v", ran, err)
		}
	})
}
