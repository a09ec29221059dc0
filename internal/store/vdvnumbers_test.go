package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestVDVNumberCounter: the store's counter under concurrent transactions
// (20 writers × 250 numbers each) hands out 5,000 distinct numbers
// without a gap, a rolled-back transaction gives its number back, and the
// end of the 4-byte field is refused (vdv_numbers_exhausted), not wrapped.
// Both engines.
func TestVDVNumberCounter(t *testing.T) {
	storetest.ForEachEngineLoaded(t, func(t *testing.T, st *store.Store) {
		{
			ctx := context.Background()
			at := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
			const writers, each = 20, 250
			got := make(chan uint32, writers*each)
			errs := make(chan error, writers)
			var wg sync.WaitGroup
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range each {
						err := st.Write(ctx, func(q store.Q) error {
							n, err := q.NextVDVNumber(ctx, at)
							if err == nil {
								got <- n // a retried transaction would send twice: counted below
							}
							return err
						})
						if err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(got)
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			seen := map[uint32]int{}
			for n := range got {
				seen[n]++
			}
			for n := uint32(1); n <= writers*each; n++ {
				if seen[n] < 1 {
					t.Errorf("number %d never handed out", n)
				}
			}
			// A number sent twice can only come from a retried (rolled back)
			// transaction; what was committed is the counter.
			var last int64
			if err := st.DB().QueryRowContext(ctx, `SELECT last_number FROM vdv_ticket_numbers WHERE id = 1`).Scan(&last); err != nil || last != writers*each {
				t.Fatalf("counter at %d (%v), want %d", last, err, writers*each)
			}
			// Rolled back: the number comes back.
			_ = st.Write(ctx, func(q store.Q) error {
				if _, err := q.NextVDVNumber(ctx, at); err != nil {
					return err
				}
				return fmt.Errorf("roll back")
			})
			if err := st.Write(ctx, func(q store.Q) error {
				n, err := q.NextVDVNumber(ctx, at)
				if err == nil && n != writers*each+1 {
					t.Errorf("after a rollback: %d, want %d", n, writers*each+1)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			// The end of the field.
			if _, err := st.DB().ExecContext(ctx, `UPDATE vdv_ticket_numbers SET last_number = $1 WHERE id = 1`, int64(store.MaxVDVNumber)-1); err != nil {
				t.Fatal(err)
			}
			if err := st.Write(ctx, func(q store.Q) error {
				n, err := q.NextVDVNumber(ctx, at)
				if err == nil && n != store.MaxVDVNumber {
					t.Errorf("the last number: %d", n)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			err := st.Write(ctx, func(q store.Q) error { _, err := q.NextVDVNumber(ctx, at); return err })
			if ae := apperr.As(err); ae == nil || ae.Code != store.CodeVDVNumbersExhausted {
				t.Fatalf("past the field's end: %v", err)
			}
		}
	})
}
