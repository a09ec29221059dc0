package store_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/store"
	gocmp "github.com/google/go-cmp/cmp"
)

func TestConformanceInvoiceDeliveries(t *testing.T) { invoiceDeliveriesConformance.run(t) }

// invDelivery is a pending delivery id of invoice inv at at.
func invDelivery(id string, inv invoicing.Invoice, at time.Time) invoicing.Delivery {
	return invoicing.Delivery{ID: id, InvoiceID: inv.ID, AccountID: inv.AccountID, Environment: inv.Environment,
		Channel: invoicing.ChannelEmail, Recipient: "büro@example.com", Status: invoicing.DeliveryPending, CreatedAt: at, UpdatedAt: at}
}

// invoiceDeliveriesConformance: invoicedeliveries.go (the deliveries of
// documents to their buyers and their attempts).
var invoiceDeliveriesConformance = conformanceCases{
	"AddInvoiceDelivery": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		d := invDelivery("dl-1", f.invoice(fxAccount, account.Test, "inv-1", "R-1", fxAt, nil), fxAt)
		checkInsert(t, f, d, func(q store.Q) error { return q.AddInvoiceDelivery(f.ctx, d) },
			func(q store.Q) (invoicing.Delivery, error) { return q.InvoiceDelivery(f.ctx, d.ID) })
		orphan := invDelivery("dl-2", invoicing.Invoice{ID: "no-such-invoice", AccountID: fxAccount, Environment: account.Live}, fxAt)
		if err := s.Write(f.ctx, func(q store.Q) error { return q.AddInvoiceDelivery(f.ctx, orphan) }); err == nil {
			t.Error("a delivery of an unknown document was written")
		}
	},
	"InvoiceDelivery": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		d := invDelivery("dl-1", f.invoice(fxOther, account.Live, "inv-1", "R-1", fxAt, nil), fxAt)
		f.write(func(q store.Q) error { return q.AddInvoiceDelivery(f.ctx, d) })
		checkByID(t, d, d.ID, store.CodeInvoiceDeliveryNotFound, func(id string) (invoicing.Delivery, error) {
			return f.read().InvoiceDelivery(f.ctx, id)
		})
	},
	"InvoiceDeliveries": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, nil)
		other := f.invoice(fxAccount, account.Live, "inv-2", "R-2", fxAt, nil)
		want := []invoicing.Delivery{invDelivery("dl-b", inv, fxAt), invDelivery("dl-a", inv, fxAt.Add(time.Minute)), invDelivery("dl-c", inv, fxAt.Add(time.Minute))}
		f.write(func(q store.Q) error {
			for _, d := range []invoicing.Delivery{want[2], invDelivery("dl-x", other, fxAt), want[0], want[1]} {
				if err := q.AddInvoiceDelivery(f.ctx, d); err != nil {
					return err
				}
			}
			_, err := q.RecordDeliveryAttempt(f.ctx, "dl-a", invoicing.DeliveryAttempt{At: fxAt.Add(2 * time.Minute), Outcome: invoicing.DeliverySent, Reply: "250 ok"})
			return err
		})
		want[1].Status, want[1].UpdatedAt = invoicing.DeliverySent, fxAt.Add(2*time.Minute)
		want[1].Attempts = []invoicing.DeliveryAttempt{{N: 1, At: fxAt.Add(2 * time.Minute), Outcome: invoicing.DeliverySent, Reply: "250 ok"}}
		got, err := f.read().InvoiceDeliveries(f.ctx, inv.ID)
		if d := gocmp.Diff(want, got); err != nil || d != "" {
			t.Errorf("InvoiceDeliveries (oldest first, then by id; %v; -want +got):\n%s", err, d)
		}
		if got, err := f.read().InvoiceDeliveries(f.ctx, "inv-none"); err != nil || len(got) != 0 {
			t.Errorf("InvoiceDeliveries of a document without = %v, %v", got, err)
		}
	},
	"RecordDeliveryAttempt": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		d := invDelivery("dl-1", f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, nil), fxAt)
		f.write(func(q store.Q) error { return q.AddInvoiceDelivery(f.ctx, d) })
		record := func(a invoicing.DeliveryAttempt) (n int) {
			f.write(func(q store.Q) (err error) { n, err = q.RecordDeliveryAttempt(f.ctx, d.ID, a); return err })
			return n
		}
		a1 := invoicing.DeliveryAttempt{At: fxAt.Add(time.Second), Outcome: invoicing.DeliveryDeferred, Reply: "451 4.7.1 später – 稍后"}
		a2 := invoicing.DeliveryAttempt{At: fxAt.Add(time.Minute), Outcome: invoicing.DeliveryFailed, Reply: "554 5.7.1 no"}
		if n := record(a1); n != 1 {
			t.Errorf("first attempt numbered %d", n)
		}
		if n := record(a2); n != 2 {
			t.Errorf("second attempt numbered %d", n)
		}
		// A final delivery takes no further attempt (a job run twice).
		if n := record(invoicing.DeliveryAttempt{At: fxAt.Add(time.Hour), Outcome: invoicing.DeliverySent, Reply: "250"}); n != 0 {
			t.Errorf("an attempt after the final one numbered %d", n)
		}
		got, err := f.read().InvoiceDelivery(f.ctx, d.ID)
		a1.N, a2.N = 1, 2
		d.Status, d.UpdatedAt, d.Attempts = invoicing.DeliveryFailed, a2.At, []invoicing.DeliveryAttempt{a1, a2}
		if diff := gocmp.Diff(d, got); err != nil || diff != "" {
			t.Errorf("after two attempts (%v; -want +got):\n%s", err, diff)
		}
		var n int
		err = s.Write(f.ctx, func(q store.Q) (err error) { n, err = q.RecordDeliveryAttempt(f.ctx, "unknown", a1); return err })
		if err != nil || n != 0 {
			t.Errorf("an attempt of an unknown delivery: %d, %v", n, err)
		}
	},
}
