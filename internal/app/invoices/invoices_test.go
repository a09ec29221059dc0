package invoices_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/testtool"
)

var identifier = regexp.MustCompile(`^[0-9a-f]{32}$`)

// TestSplitInvoices: a split item is invoiced once per customer with that
// customer's share, the numbers run gap-free per environment and year,
// a cancellation releases the share, a payment notice claims nothing.
func TestSplitInvoices(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		anna, ben := b.customer(t, b.live, "Anna Schmidt"), b.customer(t, b.live, "Ben Meier")
		item := b.itemOf(t, b.live)

		// Bad assignments name the field and change nothing.
		_, err := b.inv.UpdateBillableItem(b.ctx, idempotency.Claim{}, b.live, item, invoices.ItemUpdate{})
		testtool.WantErr(t, err, apperr.Unprocessable, "nothing_to_update")
		_, err = b.inv.UpdateBillableItem(b.ctx, idempotency.Claim{}, b.live, item, invoices.ItemUpdate{CustomerID: json.RawMessage(`"` + anna.ID + `"`),
			Split: json.RawMessage(`[]`)})
		testtool.WantFields(t, testtool.WantErr(t, err, apperr.Unprocessable, "customer_and_split"), "/split")
		_, err = b.update(b.live, item, "split", `[{"customer_id":"`+anna.ID+`","amount_in_cents":200},{"customer_id":"`+ben.ID+`","amount_in_cents":179}]`)
		testtool.WantFields(t, testtool.WantErr(t, err, apperr.Unprocessable, "split_sum_mismatch"), "/split")
		_, err = b.update(b.live, item, "split", `[{"customer_id":"`+anna.ID+`","amount_in_cents":200},{"customer_id":"farebox-customer-nope","amount_in_cents":180}]`)
		testtool.WantFields(t, testtool.WantErr(t, err, apperr.Unprocessable, "unknown_customer"), "/split/1/customer_id")
		if v, _ := b.inv.BillableItem(b.ctx, b.live, item); v.Split != nil || v.CustomerID != nil {
			t.Fatalf("rejected updates assigned %+v", v.Assignment)
		}

		v, err := b.update(b.live, item, "split", `[{"customer_id":"`+anna.ID+`","amount_in_cents":200},{"customer_id":"`+ben.ID+`","amount_in_cents":180}]`)
		if err != nil || len(v.Split) != 2 || v.Split[0] != (invoicing.Share{CustomerID: anna.ID, AmountInCents: 200}) || v.CustomerID != nil {
			t.Fatalf("split: %+v %v", v, err)
		}
		_, err = b.inv.IssueInvoice(b.ctx, idempotency.Claim{}, b.live, invoices.InvoiceRequest{ItemID: item})
		testtool.WantErr(t, err, apperr.Unprocessable, "customer_required")
		other := b.customer(t, b.live, "Clara Wolf")
		_, err = b.inv.IssueInvoice(b.ctx, idempotency.Claim{}, b.live, invoices.InvoiceRequest{ItemID: item, CustomerID: other.ID})
		testtool.WantErr(t, err, apperr.Unprocessable, "customer_not_on_item")

		toAnna := b.invoice(t, b.live, item, anna.ID)
		if toAnna.Number != "2026-000001" || toAnna.Kind != invoicedoc.KindInvoice || deref(toAnna.CustomerID) != anna.ID ||
			toAnna.GrossCents != 200 || toAnna.Electronic || !identifier.MatchString(toAnna.Identifier) || !toAnna.CreatedAt.Equal(start) {
			t.Fatalf("invoice to Anna %+v", toAnna)
		}
		d := toAnna.Document
		if d.Number != toAnna.Number || d.Buyer.Name() != "Anna Schmidt" || len(d.Lines) != 1 || d.Lines[0].Gross != 200 ||
			d.Lines[0].BillableItemID != item || d.Lines[0].RateBP != 700 || !d.IssueDate.Equal(start) ||
			!d.Payment.DueDate.Equal(start.AddDate(0, 0, 14)) || d.Test {
			t.Fatalf("document %+v", d)
		}
		if s := d.Lines[0].Split; len(s) != 2 || s[0] != (invoicedoc.Share{Name: "Anna Schmidt", Amount: 200, Invoiced: true}) ||
			s[1] != (invoicedoc.Share{Name: "Ben Meier", Amount: 180}) {
			t.Errorf("shares %+v", s)
		}
		_, err = b.inv.IssueInvoice(b.ctx, idempotency.Claim{}, b.live, invoices.InvoiceRequest{ItemID: item, CustomerID: anna.ID})
		testtool.WantErr(t, err, apperr.Conflict, "already_invoiced")
		toBen := b.invoice(t, b.live, item, ben.ID)
		if toBen.Number != "2026-000002" || toBen.GrossCents != 180 {
			t.Errorf("invoice to Ben %s %d", toBen.Number, toBen.GrossCents)
		}
		if v, _ := b.inv.BillableItem(b.ctx, b.live, item); len(v.Invoiced) != 2 || v.Invoiced[anna.ID] != toAnna.ID || v.Invoiced[ben.ID] != toBen.ID {
			t.Errorf("claims %v", v.Invoiced)
		}
		_, err = b.update(b.live, item, "customer_id", `"`+anna.ID+`"`)
		testtool.WantErr(t, err, apperr.Conflict, "item_already_invoiced")
		// The file job is queued, not run: the PDF is there all the same,
		// rendered on the first download (issue 14: the PDF is there when
		// the invoice is).
		pdfFile, err := b.inv.Download(b.ctx, toAnna.ID, toAnna.Identifier, invoices.FormatPDF)
		if err != nil || !bytes.HasPrefix(pdfFile.Body, []byte("%PDF-")) {
			t.Fatalf("PDF before the job ran: %v, %.10q", err, pdfFile.Body)
		}
		_, err = b.inv.Download(b.ctx, toAnna.ID, "00000000000000000000000000000000", invoices.FormatPDF)
		testtool.WantErr(t, err, apperr.NotFound, "not_found")

		// The cancellation takes the next invoice number and frees Anna's share.
		b.clock.Advance(24 * time.Hour)
		storno, err := b.inv.CancelInvoice(b.ctx, idempotency.Claim{}, b.live, toAnna.ID)
		if err != nil {
			t.Fatal(err)
		}
		if storno.Number != "2026-000003" || storno.Kind != invoicedoc.KindCancellation || deref(storno.RefersTo) != toAnna.ID ||
			deref(storno.CustomerID) != anna.ID || storno.Document.Cancels == nil || storno.Document.Cancels.Number != toAnna.Number ||
			!storno.Document.IssueDate.Equal(b.clock.Now()) || storno.GrossCents != 200 {
			t.Fatalf("cancellation %+v", storno)
		}
		if orig, _ := b.inv.Invoice(b.ctx, b.live, toAnna.ID); deref(orig.CancelledBy) != storno.ID {
			t.Errorf("original cancelled by %v", orig.CancelledBy)
		}
		_, err = b.inv.CancelInvoice(b.ctx, idempotency.Claim{}, b.live, toAnna.ID)
		testtool.WantErr(t, err, apperr.Conflict, "already_cancelled")
		_, err = b.inv.CancelInvoice(b.ctx, idempotency.Claim{}, b.live, storno.ID)
		testtool.WantErr(t, err, apperr.Unprocessable, "not_an_invoice")
		if v, _ := b.inv.BillableItem(b.ctx, b.live, item); len(v.Invoiced) != 1 || v.Invoiced[ben.ID] != toBen.ID {
			t.Errorf("claims after cancellation %v", v.Invoiced)
		}
		if again := b.invoice(t, b.live, item, anna.ID); again.Number != "2026-000004" {
			t.Errorf("re-invoice number %s", again.Number)
		}

		// A payment notice: its own series, due no earlier than the invoice.
		notice, err := b.inv.PaymentNoticeForInvoice(b.ctx, idempotency.Claim{}, b.live, toBen.ID)
		if err != nil {
			t.Fatal(err)
		}
		if notice.Number != "ZA-2026-000001" || notice.Kind != invoicedoc.KindPaymentNotice || deref(notice.RefersTo) != toBen.ID ||
			!notice.Document.Payment.DueDate.Equal(b.clock.Now().AddDate(0, 0, 14)) {
			t.Errorf("payment notice %+v", notice)
		}
		_, err = b.inv.PaymentNoticeForInvoice(b.ctx, idempotency.Claim{}, b.live, toAnna.ID)
		testtool.WantErr(t, err, apperr.Conflict, "invoice_cancelled")

		// Another tenant sees none of it.
		b.newAccount(t, "acc_other")
		stranger := account.Principal{AccountID: "acc_other", Environment: account.Live, KeyID: "key_other"}
		_, err = b.inv.Invoice(b.ctx, stranger, toBen.ID)
		testtool.WantErr(t, err, apperr.NotFound, "invoice_not_found")
		_, err = b.inv.BillableItem(b.ctx, stranger, item)
		testtool.WantErr(t, err, apperr.NotFound, "billable_item_not_found")
	})
}

// TestInvoiceSeries: test and live environments count separately, and the
// year of a number is the Berlin year of the issue instant.
func TestInvoiceSeries(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		testItem := b.itemOf(t, b.test)
		inv := b.invoice(t, b.test, testItem, "")
		if inv.Number != "TEST-2026-000001" || !inv.Document.Test || inv.Document.Buyer != nil || inv.CustomerID != nil || inv.GrossCents != 380 {
			t.Errorf("test invoice %+v", inv)
		}
		// 23:30 UTC on New Year's Eve is already 2027 in Berlin.
		b.clock.Set(time.Date(2026, 12, 31, 23, 30, 0, 0, time.UTC))
		if inv := b.invoice(t, b.live, b.itemOf(t, b.live), ""); inv.Number != "2027-000001" {
			t.Errorf("New Year's invoice %s", inv.Number)
		}
		b.clock.Set(time.Date(2026, 12, 31, 22, 59, 59, 0, time.UTC))
		if inv := b.invoice(t, b.live, b.itemOf(t, b.live), ""); inv.Number != "2026-000001" {
			t.Errorf("last 2026 invoice %s", inv.Number)
		}
		// A failed invoice consumes no number.
		_, err := b.inv.IssueInvoice(b.ctx, idempotency.Claim{}, b.live, invoices.InvoiceRequest{ItemID: "farebox-billable-nope"})
		testtool.WantErr(t, err, apperr.NotFound, "billable_item_not_found")
		if inv := b.invoice(t, b.live, b.itemOf(t, b.live), ""); inv.Number != "2026-000002" {
			t.Errorf("after a failure %s", inv.Number)
		}
	})
}

// TestCollections: items of a collection are added atomically and invoiced
// together per customer; a payment notice lists them all.
func TestCollections(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		anna := b.customer(t, b.live, "Anna Schmidt")
		items := []string{b.itemOf(t, b.live), b.itemOf(t, b.live), b.itemOf(t, b.live)}
		for _, it := range items {
			if _, err := b.update(b.live, it, "customer_id", `"`+anna.ID+`"`); err != nil {
				t.Fatal(err)
			}
		}
		col, err := b.inv.CreateCollection(b.ctx, idempotency.Claim{}, b.live)
		if err != nil {
			t.Fatal(err)
		}
		other, err := b.inv.CreateCollection(b.ctx, idempotency.Claim{}, b.live)
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.inv.AddToCollection(b.ctx, idempotency.Claim{}, b.live, col, []string{items[0], "farebox-billable-nope"})
		testtool.WantFields(t, testtool.WantErr(t, err, apperr.Unprocessable, "unknown_billable_item"), "/billable_item_ids/1")
		_, err = b.inv.AddToCollection(b.ctx, idempotency.Claim{}, b.live, col, nil)
		testtool.WantFields(t, testtool.WantErr(t, err, apperr.Unprocessable, "invalid_billable_item_ids"), "/billable_item_ids")
		got, err := b.inv.AddToCollection(b.ctx, idempotency.Claim{}, b.live, col, []string{items[0], items[1], items[0]})
		if err != nil || len(got) != 2 {
			t.Fatalf("add: %v %v", got, err)
		}
		// An item of another collection makes the whole bulk add fail.
		if _, err := b.inv.AddToCollection(b.ctx, idempotency.Claim{}, b.live, other, []string{items[2]}); err != nil {
			t.Fatal(err)
		}
		_, err = b.inv.AddToCollection(b.ctx, idempotency.Claim{}, b.live, col, []string{items[2]})
		testtool.WantErr(t, err, apperr.Conflict, "item_in_other_collection")

		inv := b.invoice(t, b.live, items[1], "")
		if inv.GrossCents != 760 || len(inv.Document.Lines) != 2 || deref(inv.CollectionID) != col || deref(inv.CustomerID) != anna.ID {
			t.Fatalf("collection invoice %+v", inv)
		}
		for _, it := range items[:2] {
			if v, _ := b.inv.BillableItem(b.ctx, b.live, it); v.Invoiced[anna.ID] != inv.ID || deref(v.CollectionID) != col {
				t.Errorf("item %s: %+v", it, v)
			}
		}
		notice, err := b.inv.PaymentNoticeForCollection(b.ctx, idempotency.Claim{}, b.live, col, "")
		if err != nil || notice.GrossCents != 760 || len(notice.Document.Lines) != 2 || notice.Number != "ZA-2026-000001" {
			t.Errorf("collection notice %+v %v", notice, err)
		}
		empty, _ := b.inv.CreateCollection(b.ctx, idempotency.Claim{}, b.live)
		_, err = b.inv.PaymentNoticeForCollection(b.ctx, idempotency.Claim{}, b.live, empty, "")
		testtool.WantErr(t, err, apperr.Unprocessable, "collection_empty")
	})
}
