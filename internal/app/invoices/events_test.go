package invoices_test

import (
	"encoding/json"
	"testing"

	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/testtool"
)

// want is an event a change must write: its type, its object's id and
// what its object shows (the object's GET answer).
type want struct {
	typ    event.Type
	id     string
	object any
}

// next returns the events written since the last call.
func (b *testBundle) next() []event.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.events
	b.events = nil
	return out
}

// expect fails unless the events written since the last call are exactly
// wants, in order: each of the type about the object id in the live
// environment at the clock's time, showing the JSON of the object's GET.
func (b *testBundle) expect(t *testing.T, wants ...want) {
	t.Helper()
	got := b.next()
	if len(got) != len(wants) {
		var types []event.Type
		for _, e := range got {
			types = append(types, e.Type)
		}
		t.Fatalf("%d new events %v, want %d", len(got), types, len(wants))
	}
	for i, w := range wants {
		e := got[i]
		if e.Type != w.typ || e.ObjectID != w.id || e.APIVersion != event.APIVersion || e.AccountID != b.live.AccountID ||
			e.Environment != b.live.Environment || !e.CreatedAt.Equal(b.clock.Now()) {
			t.Errorf("event %d: %+v, want %s about %s", i, e, w.typ, w.id)
		}
		want, err := json.Marshal(w.object)
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Object) != string(want) {
			t.Errorf("%s object\n got %s\nwant %s", w.typ, e.Object, want)
		}
	}
}

// TestEventsOfEveryChange drives every invoicing change and checks that
// each writes its event exactly once, with the object its GET shows, and
// that a refused change, a repeated download and the job's second look
// write nothing.
func TestEventsOfEveryChange(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		invoice := func(id string) any {
			inv, err := b.inv.Invoice(b.ctx, b.live, id)
			if err != nil {
				t.Fatal(err)
			}
			return b.inv.Response(inv)
		}
		item := func(id string) any {
			v, err := b.inv.BillableItem(b.ctx, b.live, id)
			if err != nil {
				t.Fatal(err)
			}
			return invoices.BillableItemResponse(v)
		}

		// billable_item.updated (PUT and a collection), invoice.created,
		// invoice.files_ready once (job and download), payment_notice.created,
		// invoice.created of the cancellation + invoice.cancelled.
		cust := b.customer(t, b.live, "Anna")
		itemID := b.itemOf(t, b.live)
		b.next()
		if _, err := b.update(b.live, itemID, "customer_id", `"`+cust.ID+`"`); err != nil {
			t.Fatal(err)
		}
		b.expect(t, want{event.BillableItemUpdated, itemID, item(itemID)})
		coll, err := b.inv.CreateCollection(b.ctx, idempotency.Claim{}, b.live)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.inv.AddToCollection(b.ctx, idempotency.Claim{}, b.live, coll, []string{itemID}); err != nil {
			t.Fatal(err)
		}
		b.expect(t, want{event.BillableItemUpdated, itemID, item(itemID)})
		inv := b.invoice(t, b.live, itemID, cust.ID)
		b.expect(t, want{event.InvoiceCreated, inv.ID, invoice(inv.ID)})
		if _, err := b.jobs.RunOnce(b.ctx); err != nil {
			t.Fatal(err)
		}
		b.expect(t, want{event.InvoiceFilesReady, inv.ID, invoice(inv.ID)})
		if _, err := b.inv.Download(b.ctx, inv.ID, inv.Identifier, invoices.FormatPDF); err != nil {
			t.Fatal(err)
		}
		b.expect(t)
		notice, err := b.inv.PaymentNoticeForInvoice(b.ctx, idempotency.Claim{}, b.live, inv.ID)
		if err != nil {
			t.Fatal(err)
		}
		b.expect(t, want{event.PaymentNoticeCreated, notice.ID, invoice(notice.ID)})
		cancel, err := b.inv.CancelInvoice(b.ctx, idempotency.Claim{}, b.live, inv.ID)
		if err != nil {
			t.Fatal(err)
		}
		b.expect(t, want{event.InvoiceCreated, cancel.ID, invoice(cancel.ID)}, want{event.InvoiceCancelled, inv.ID, invoice(inv.ID)})
		_, err = b.inv.CancelInvoice(b.ctx, idempotency.Claim{}, b.live, inv.ID)
		testtool.WantErr(t, err, apperr.Conflict, "already_cancelled")
		b.expect(t)

		// The notice's and the cancellation's files: one files_ready each.
		if _, err := b.jobs.RunOnce(b.ctx); err != nil {
			t.Fatal(err)
		}
		ready := map[string]int{}
		for _, e := range b.next() {
			if e.Type != event.InvoiceFilesReady {
				t.Errorf("unexpected %s", e.Type)
			}
			ready[e.ObjectID]++
		}
		if len(ready) != 2 || ready[notice.ID] != 1 || ready[cancel.ID] != 1 {
			t.Errorf("files_ready of notice and cancellation: %v", ready)
		}

		// A download that renders the PDF before the job completes the set of
		// an electronic invoice: files_ready comes with the last file, once.
		ecust, err := b.inv.CreateCustomer(b.ctx, idempotency.Claim{}, b.live, invoices.CustomerInput{AddressLines: []string{"Amt Dresden"},
			Electronic: json.RawMessage(`{"electronic_address":"amt@dresden.example","electronic_address_scheme_id":"EM","buyer_reference":"991-12345-67",
			"address":{"name":"Amt Dresden","street_with_number":"Große Straße 5","postal_code":"01067","city":"Dresden","country_code":"DE"}}`)}, true)
		if err != nil || ecust.Electronic == nil {
			t.Fatalf("electronic customer %+v %v", ecust, err)
		}
		item2 := b.itemOf(t, b.live)
		if _, err := b.update(b.live, item2, "customer_id", `"`+ecust.ID+`"`); err != nil {
			t.Fatal(err)
		}
		inv2 := b.invoice(t, b.live, item2, ecust.ID)
		b.next()
		if _, err := b.inv.Download(b.ctx, inv2.ID, inv2.Identifier, invoices.FormatPDF); err != nil {
			t.Fatal(err)
		}
		b.expect(t)
		if _, err := b.jobs.RunOnce(b.ctx); err != nil {
			t.Fatal(err)
		}
		b.expect(t, want{event.InvoiceFilesReady, inv2.ID, invoice(inv2.ID)})

		if woken := b.wakes(); woken != 4 {
			t.Errorf("the job runner was woken %d times, want one per document (4)", woken)
		}
	})
}
