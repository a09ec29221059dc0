package httpapi_test

import (
	"context"
	"sync"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestVDVTicketNumbersUnique: the VDV-KA ticket number (Berechtigungsnummer)
// comes from the issuer's counter, not from 32 bits of a hash. A ticket
// issued before (its product switched to vdv-ka-static later) keeps the
// hash-derived number its barcode carries; the start-up backfill stores it,
// so the counter, set up to hand out exactly that number next, skips it.
// Then 400 tickets (80 under -short) issued over HTTP by eight concurrent
// partners' calls all carry distinct numbers, each the one stored with the
// ticket, inside the verified barcode (header and both issue-data sequence
// numbers). Both engines.
func TestVDVTicketNumbersUnique(t *testing.T) {
	t.Parallel()
	_, vdvPKI := profileWalletIssuers(t)
	configure := withWalletOptions(profileWalletOptions(t, true))
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		e := apitest.New(t, engine, apitest.Options{Configure: configure})
		ctx := context.Background()
		trust := &vdv.Trust{}
		if _, err := trust.AddRoot(vdvPKI.Root, true); err != nil {
			t.Fatal(err)
		}
		if _, err := trust.AddCA(vdvPKI.CA, e.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		numberOf := func(tid string) uint32 {
			t.Helper()
			v, err := vdv.Verify(ticketPayload(t, ticket(t, e, tid)), trust, e.Clock.Now())
			if err != nil {
				t.Fatalf("ticket %s: %v", tid, err)
			}
			if v.TicketID != tid {
				t.Fatalf("barcode of %s names %s", tid, v.TicketID)
			}
			return v.Number
		}
		day := productIDs(t, e)["day/adult"]
		activateDay := func(key string) string {
			o := order(t, e, key, day)
			return mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), map[string]any{"identification_medium": medium("Zoë", "Ağaoğlu", "1990-02-28")})
		}

		// A ticket from before: farebox's profile, no number stored.
		old := activateDay(e.LiveKey)
		f := e.Products.Catalog().File()
		for i := range f.Products {
			if f.Products[i].ID == day {
				f.Products[i].BarcodeProfile, f.Products[i].BarcodeProductNumber = catalog.BarcodeVDV, 4711
			}
		}
		if err := e.Products.Import(ctx, f); err != nil {
			t.Fatal(err)
		}
		legacy := vdv.TicketNumber(old)
		oldBarcode := ticketPayload(t, ticket(t, e, old))
		if n := numberOf(old); n != legacy {
			t.Fatalf("the old ticket's number %d, want its hash-derived %d", n, legacy)
		}
		backfill := func() (int, error) {
			return wallets.BackfillVDVNumbers(ctx, store.NewView[wallets.Queries](e.Store), e.Clock, e.App.Catalog().File().Products)
		}
		if n, err := backfill(); err != nil || n != 1 {
			t.Fatalf("backfill numbered %d (%v), want the one old ticket", n, err)
		}
		if n, err := backfill(); err != nil || n != 0 {
			t.Fatalf("second backfill numbered %d (%v)", n, err)
		}
		if got := ticketPayload(t, ticket(t, e, old)); string(got) != string(oldBarcode) {
			t.Fatal("the backfill changed the old ticket's barcode")
		}
		// The counter's next number would be the old ticket's: skipped.
		if _, err := e.Store.DB().ExecContext(ctx, `INSERT INTO vdv_ticket_numbers (id, last_number) VALUES (1, $1)
			ON CONFLICT (id) DO UPDATE SET last_number = $1`, int64(legacy)-1); err != nil {
			t.Fatal(err)
		}
		next := activateDay(e.LiveKey)
		if n := numberOf(next); n != legacy+1 {
			t.Fatalf("after the counter reached the old ticket's number the next ticket has %d, want %d", n, legacy+1)
		}

		// Many tickets, issued concurrently (live and test keys share
		// the issuer's counter): eight callers at once in both tiers, 50
		// tickets each in the full suite, 10 under -short (the count is
		// the load shape, testtool.Load; the race is the same).
		workers, each := 8, 50
		if testing.Short() {
			each = 10
		}
		ids := make(chan string, workers*each)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := e.LiveKey
				if w%2 == 1 {
					key = e.TestKey
				}
				for range each {
					ids <- activateDay(key)
				}
			}()
		}
		wg.Wait()
		close(ids)
		seen := map[uint32]string{legacy: old, legacy + 1: next}
		for id := range ids {
			tk, err := e.Store.Read().Ticket(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			n := numberOf(id)
			if n != tk.VDVNumber || n == 0 {
				t.Errorf("ticket %s: barcode number %d, stored %d", id, n, tk.VDVNumber)
			}
			if other, dup := seen[n]; dup {
				t.Errorf("tickets %s and %s share VDV number %d", other, id, n)
			}
			seen[n] = id
		}
		if len(seen) != workers*each+2 {
			t.Errorf("%d distinct numbers for %d tickets", len(seen), workers*each+2)
		}
		t.Logf("%d tickets, %d distinct VDV numbers", workers*each+2, len(seen))
	})
}
