package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/uic"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestBarcodeIssueTimeIsReal: a monthly ticket bought on 28 November is
// valid from 1 November 00:00 Berlin, but its barcodes say it was issued on
// 28 November at the real time (U_HEAD, the FCB's issuing details, the VDV
// transaction time), so an inspector can see a late purchase; before
// issue 28 they said 1 November 00:00. December's ticket, obtained the same
// afternoon right after the reorder, is issued then and valid from
// 1 December 00:00 in both barcodes. Decoded with the project's UIC 918.3
// and VDV-KA decoders, signatures checked; both engines.
func TestBarcodeIssueTimeIsReal(t *testing.T) {
	t.Parallel()
	uicIss, vdvPKI := profileWalletIssuers(t)
	configure := withWalletOptions(profileWalletOptions(t, false))
	uicTrust := &uic.Trust{}
	uicTrust.TrustIssuer(uicIss)
	vdvTrust := &vdv.Trust{}
	if _, err := vdvTrust.AddRoot(vdvPKI.Root, true); err != nil {
		t.Fatal(err)
	}
	if _, err := vdvTrust.AddCA(vdvPKI.CA, time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	bought := time.Date(2026, 11, 28, 15, 37, 20, 0, clock.Berlin) // 14:37:20 UTC
	nov, dec, jan := bln(2026, 11, 1, 0), bln(2026, 12, 1, 0), bln(2027, 1, 1, 0)
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		e := apitest.New(t, engine, apitest.Options{Now: bought, Configure: configure})
		ids := productIDs(t, e)
		for _, profile := range []string{catalog.BarcodeUIC, catalog.BarcodeVDV} {
			f := e.Products.Catalog().File()
			for i := range f.Products {
				if f.Products[i].ID == ids["month/adult"] {
					f.Products[i].BarcodeProfile, f.Products[i].BarcodeProductNumber = profile, 9999
				}
			}
			if err := e.Products.Import(context.Background(), f); err != nil {
				t.Fatal(err)
			}
			e.Clock.Set(bought)
			cid, subID, november := monthlyCoupon(t, e)
			if r := reorder(e, e.LiveKey, subID, nil); r.Status != 201 {
				t.Fatalf("reorder: %d %s", r.Status, r.Body)
			}
			e.Clock.Set(bought.Add(time.Minute))
			december := ticket(t, e, mustActivate(t, e, "v9", cid, map[string]any{"reactivation_key": str(november["coupon_reactivation_key"])}))
			for _, c := range []struct {
				name         string
				tk           map[string]any
				issued       time.Time
				from, before time.Time // validity: [from, before)
			}{
				{"November, bought on the 28th", november, bought, nov, dec},
				{"December, obtained on 28 November", december, bought.Add(time.Minute), dec, jan},
			} {
				name := profile + " " + c.name
				if c.tk["ticket_created_at"] != clock.Timestamp(c.issued) || c.tk["valid_from"] != clock.Timestamp(c.from) ||
					c.tk["valid_until"] != clock.Timestamp(c.before.Add(-time.Second)) {
					t.Fatalf("%s: ticket issued %v, valid %v – %v", name, c.tk["ticket_created_at"], c.tk["valid_from"], c.tk["valid_until"])
				}
				payload := ticketPayload(t, c.tk)
				minute := c.issued.UTC().Truncate(time.Minute)
				var rep barcode.Report
				switch profile {
				case catalog.BarcodeUIC:
					rep = uic.Inspect(payload, uicTrust, c.issued)
					tk, ct, err := uic.Read(payload)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					head, ok := ct.Record("U_HEAD")
					if !ok || len(head.Data) < 36 {
						t.Fatalf("%s: U_HEAD %q", name, head.Data)
					}
					if got, want := string(head.Data[24:36]), minute.Format("020120061504"); got != want {
						t.Errorf("%s: U_HEAD issuing time %s, want %s (the real time, UTC)", name, got, want)
					}
					if !tk.IssuedAt.Equal(minute) {
						t.Errorf("%s: FCB issuing time %v, want %v", name, tk.IssuedAt, minute)
					}
					// FCB 1.3 counts the first day of validity from the
					// issuing day, at most one day back: a start before it
					// reads as 00:00 Berlin the day before the issue (the
					// barcode did not exist earlier); a later start exactly.
					wantFrom := c.from
					if earliest := time.Date(minute.Year(), minute.Month(), minute.Day()-1, 0, 0, 0, 0, clock.Berlin); wantFrom.Before(earliest) {
						wantFrom = earliest
					}
					if !tk.ValidFrom.Equal(wantFrom) || !tk.ValidUntil.Equal(c.before.Add(-time.Minute)) {
						t.Errorf("%s: FCB validity %v – %v, want %v – %v", name, tk.ValidFrom, tk.ValidUntil, wantFrom, c.before.Add(-time.Minute))
					}
				case catalog.BarcodeVDV:
					rep = vdv.Inspect(payload, vdvTrust, c.issued)
					v, err := vdv.Verify(payload, vdvTrust, c.issued)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					// VDV times have 2-second steps (rounded down).
					if want := c.issued.UTC().Truncate(2 * time.Second); !v.IssuedAt.Equal(want) {
						t.Errorf("%s: VDV transaction time %v, want %v", name, v.IssuedAt, want)
					}
					if !v.ValidFrom.Equal(c.from) || !v.ValidUntil.Equal(c.before.Add(-2*time.Second)) {
						t.Errorf("%s: VDV validity %v – %v, want %v – %v", name, v.ValidFrom, v.ValidUntil, c.from, c.before.Add(-2*time.Second))
					}
				}
				wantState := barcode.StateValid
				if c.from.After(c.issued) {
					wantState = barcode.StateNotYet
				}
				if !rep.Genuine || rep.State != wantState || rep.Claims.TicketID != str(c.tk["id"]) {
					t.Errorf("%s: inspected at issue: %s", name, rep)
				}
			}
		}
	})
}
