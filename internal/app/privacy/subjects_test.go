package privacy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/privacy"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/retention"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/ticketing"
)

// endOf2034 is when the duty of a billing record of 2026 ends (8 years
// after the end of its calendar year in Berlin).
const endOf2034 = "2034-12-31T23:00:00Z"

// TestExport: an export holds the subject's records and nothing else —
// a coupon's ticket with its medium and the date the job erases it, its
// billable item and when that is erased; a subscription's coupons (postal
// code), tickets and the subscription; a customer's recipient data and
// invoice. Another environment's record is not found.
func TestExport(t *testing.T) {
	eachEngine(t, privacy.Options{}, func(t *testing.T, b *bed) {
		single, tk := b.ticketFor(t, "Erika", false)
		month, mt := b.ticketFor(t, "Max", true)
		cust := b.customer(t, "Muster GmbH")
		inv := b.invoiced(t, cust.ID)

		ex, err := b.priv.Export(b.ctx, b.live, privacy.SubjectCoupon, single.ID)
		if err != nil || ex.Object != "personal_data_export" || len(ex.Coupons) != 1 || ex.Coupons[0].ID != single.ID ||
			len(ex.Tickets) != 1 || ex.Tickets[0].ID != tk.ID || !strings.Contains(string(ex.Tickets[0].IdentificationMedium), "Erika") ||
			ex.Tickets[0].IdentificationErased || len(ex.Subscriptions)+len(ex.Customers) != 0 {
			t.Fatalf("coupon export: %s %v", testtool.JSON(t, ex), err)
		}
		if got, want := testtool.JSON(t, ex.Tickets[0].IdentificationErasedFrom), testtool.JSON(t, tk.ValidUntil.Add(retention.Default().Identification).Truncate(time.Second)); got != want {
			t.Errorf("erased from %s, want %s", got, want)
		}
		if len(ex.BillingRecord) != 1 || ex.BillingRecord[0].Type != "billable_item" || testtool.JSON(t, ex.BillingRecord[0].KeptTill) != `"`+endOf2034+`"` {
			t.Errorf("coupon billing records: %s", testtool.JSON(t, ex.BillingRecord))
		}

		ex, err = b.priv.Export(b.ctx, b.live, privacy.SubjectSubscription, *month.SubscriptionID)
		if err != nil || len(ex.Subscriptions) != 1 || len(ex.Coupons) != 1 || string(ex.Coupons[0].TariffSettings) != berlinTariff ||
			len(ex.Tickets) != 1 || ex.Tickets[0].ID != mt.ID || len(ex.BillingRecord) == 0 {
			t.Fatalf("subscription export: %s %v", testtool.JSON(t, ex), err)
		}

		ex, err = b.priv.Export(b.ctx, b.live, privacy.SubjectCustomer, cust.ID)
		if err != nil || len(ex.Customers) != 1 || ex.Customers[0].AddressLines[0] != "Muster GmbH" || len(ex.Coupons)+len(ex.Tickets) != 0 {
			t.Fatalf("customer export: %s %v", testtool.JSON(t, ex), err)
		}
		found := false
		for _, r := range ex.BillingRecord {
			found = found || (r.Type == "invoice" && r.ID == inv.ID)
		}
		if !found {
			t.Errorf("customer export lacks its invoice: %s", testtool.JSON(t, ex.BillingRecord))
		}

		other := b.live
		other.Environment = account.Test
		_, err = b.priv.Export(b.ctx, other, privacy.SubjectCoupon, single.ID)
		wantCode(t, err, apperr.NotFound, store.CodeCouponNotFound)
	})
}

// TestEraseCoupon: erasing a coupon erases its ticket's identification
// data and its tariff settings at once and revokes the still valid
// ticket (kind erased), restricts its billable item until its duty ends,
// redacts the events about it and writes coupon.erased; other coupons
// keep theirs. A second erasure or an export is refused as already erased.
func TestEraseCoupon(t *testing.T) {
	eachEngine(t, privacy.Options{}, func(t *testing.T, b *bed) {
		single, tk := b.ticketFor(t, "Erika", false)
		_, kept := b.ticketFor(t, "Max", false)

		er, err := b.priv.Erase(b.ctx, idempotency.Claim{}, b.live, privacy.SubjectCoupon, single.ID)
		if err != nil || er.Object != "personal_data_erasure" || len(er.Classes) != 2 {
			t.Fatalf("erase: %s %v", testtool.JSON(t, er), err)
		}
		want := `{"class":"identification","state":"erased","until":null,"records":[{"type":"ticket","id":"` + tk.ID + `"},{"type":"coupon","id":"` + single.ID + `"}]}`
		if got := testtool.JSON(t, er.Classes[0]); got != want {
			t.Errorf("identification class %s, want %s", got, want)
		}
		if got := testtool.JSON(t, er.Classes[1]); !strings.HasPrefix(got, `{"class":"billing_records","state":"restricted","until":"`+endOf2034+`","records":[{"type":"billable_item"`) {
			t.Errorf("billing class %s", got)
		}

		got := b.ticket(t, tk.ID)
		if got.MediumHash != store.ErasedMediumHash || strings.Contains(string(got.IdentificationMedium), "Erika") {
			t.Errorf("medium kept: %s", got.IdentificationMedium)
		}
		if got.InvalidatedAt == nil || got.RevokedReason == nil || !strings.HasPrefix(*got.RevokedReason, ticketing.RevocationErased+": ") {
			t.Errorf("the valid ticket is not revoked: %v %v", got.InvalidatedAt, got.RevokedReason)
		}
		revs, _, err := b.store.Read().Revocations(b.ctx, 0, time.Time{})
		if err != nil || len(revs) != 1 || revs[0].TicketID != tk.ID || revs[0].Kind != ticketing.RevocationErased {
			t.Errorf("revocation feed: %+v %v", revs, err)
		}
		if s := b.eventsAbout(t, tk.ID, single.ID); strings.Contains(s, "Erika") || !strings.Contains(s, `"personal_data_erasure"`) {
			t.Errorf("events about the erased coupon: %s", s)
		}
		if s := b.eventsAbout(t, kept.ID); !strings.Contains(s, "Max") {
			t.Errorf("another coupon's events were redacted: %s", s)
		}
		if got := b.ticket(t, kept.ID); !strings.Contains(string(got.IdentificationMedium), "Max") || got.InvalidatedAt != nil {
			t.Errorf("another ticket changed: %s", got.IdentificationMedium)
		}

		_, err = b.priv.Erase(b.ctx, idempotency.Claim{}, b.live, privacy.SubjectCoupon, single.ID)
		wantCode(t, err, apperr.Conflict, privacy.CodeAlreadyErased)
		_, err = b.priv.Export(b.ctx, b.live, privacy.SubjectCoupon, single.ID)
		wantCode(t, err, apperr.Conflict, privacy.CodeAlreadyErased)
	})
}

// TestEraseSubscription: erasing a subscription erases the medium and
// postal code of its coupons and tickets; its coupon then counts as
// erased.
func TestEraseSubscription(t *testing.T) {
	eachEngine(t, privacy.Options{}, func(t *testing.T, b *bed) {
		month, mt := b.ticketFor(t, "Max", true)
		if _, err := b.priv.Erase(b.ctx, idempotency.Claim{}, b.live, privacy.SubjectSubscription, *month.SubscriptionID); err != nil {
			t.Fatal(err)
		}
		if c := b.coupon(t, month.ID); c.TariffSettings != nil {
			t.Errorf("postal code kept: %s", c.TariffSettings)
		}
		if got := b.ticket(t, mt.ID); got.MediumHash != store.ErasedMediumHash || got.TariffSettings != nil {
			t.Errorf("ticket kept: %s %s", got.IdentificationMedium, got.TariffSettings)
		}
		_, err := b.priv.Erase(b.ctx, idempotency.Claim{}, b.live, privacy.SubjectCoupon, month.ID)
		wantCode(t, err, apperr.Conflict, privacy.CodeAlreadyErased)
	})
}

// TestEraseCustomer: a customer without documents is erased at once; one
// with an invoice is restricted until the duty of the invoice ends (its
// data kept for the documents), and a second request says until when.
func TestEraseCustomer(t *testing.T) {
	eachEngine(t, privacy.Options{}, func(t *testing.T, b *bed) {
		lonely := b.customer(t, "Anna Allein")
		billed := b.customer(t, "Muster GmbH")
		b.invoiced(t, billed.ID)

		er, err := b.priv.Erase(b.ctx, idempotency.Claim{}, b.live, privacy.SubjectCustomer, lonely.ID)
		if err != nil || testtool.JSON(t, er.Classes) != `[{"class":"billing_records","state":"erased","until":null,"records":[{"type":"customer","id":"`+lonely.ID+`"}]}]` {
			t.Fatalf("customer without documents: %s %v", testtool.JSON(t, er), err)
		}
		if c := b.storedCustomer(t, lonely.ID); strings.Join(c.AddressLines, "|") != retention.ErasedName {
			t.Errorf("stored address after erasure: %v", c.AddressLines)
		}

		er, err = b.priv.Erase(b.ctx, idempotency.Claim{}, b.live, privacy.SubjectCustomer, billed.ID)
		if err != nil || len(er.Classes) != 2 || !strings.HasPrefix(testtool.JSON(t, er.Classes[0]), `{"class":"billing_records","state":"restricted","until":"`+endOf2034+`","records":[{"type":"customer"`) {
			t.Fatalf("customer with an invoice: %s %v", testtool.JSON(t, er), err)
		}
		if c := b.storedCustomer(t, billed.ID); c.AddressLines[0] != "Muster GmbH" || c.RestrictedUntil == nil {
			t.Errorf("restricted data not kept: %v %v", c.AddressLines, c.RestrictedUntil)
		}
		if s := b.eventsAbout(t, billed.ID); !strings.Contains(s, `"personal_data_erasure"`) || strings.Contains(s, "Muster GmbH") {
			t.Errorf("events about the customer: %s", s)
		}
		_, err = b.priv.Erase(b.ctx, idempotency.Claim{}, b.live, privacy.SubjectCustomer, billed.ID)
		if e := wantCode(t, err, apperr.Conflict, privacy.CodeAlreadyErased); !strings.Contains(e.Msg, endOf2034) {
			t.Errorf("second erasure: %s", e.Msg)
		}
	})
}
