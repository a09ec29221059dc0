package app_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/validity"
)

// TestPlaceOrder: an order writes one coupon per product, a billable item
// per single ticket and a subscription with its first ordered, undated
// cycle and that cycle's item, all stamped with the clock.
func TestPlaceOrder(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		single, month := b.product(t, singleBerlin), b.product(t, monthly)
		ref := "booking-1"
		o, err := b.app.PlaceOrder(b.ctx, idempotency.Claim{}, b.live, app.OrderRequest{ProductIDs: []string{single.ID, month.ID, single.ID},
			OptionalOrderReference: &ref})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(o.ID, "farebox-order-") || !strings.HasPrefix(o.RestoreSecret, "farebox-restore-secret-") ||
			o.AccountID != b.live.AccountID || o.Environment != account.Live || deref(o.OptionalOrderReference) != ref ||
			!o.CreatedAt.Equal(start) || len(o.Coupons) != 3 {
			t.Fatalf("order %+v", o)
		}
		for i, c := range o.Coupons {
			if c.Position != i || c.OrderID != o.ID || c.Activated || !c.CreatedAt.Equal(start) {
				t.Errorf("coupon %d: %+v", i, c)
			}
		}
		if o.Coupons[0].ID == o.Coupons[2].ID {
			t.Error("the same product twice shares a coupon")
		}

		// The single ticket's billable item carries the product's price and VAT.
		c0 := o.Coupons[0]
		if c0.SubscriptionID != nil || c0.BillableItemID == nil {
			t.Fatalf("single coupon %+v", c0)
		}
		it, err := b.inv.BillableItem(b.ctx, b.live, *c0.BillableItemID)
		if err != nil {
			t.Fatal(err)
		}
		if it.AmountCents != single.PriceInCents || it.AmountCents != 380 || it.Currency != "EUR" || it.VATRateBP != 700 ||
			it.Description != single.LocalTicketName || deref(it.CouponID) != c0.ID || it.SubscriptionID != nil ||
			!it.OrderedAt.Equal(start) || it.CustomerID != nil || it.Split != nil || len(it.Invoiced) != 0 {
			t.Errorf("single item %+v", it)
		}

		// The monthly coupon has a subscription whose one cycle is ordered and undated.
		c1 := o.Coupons[1]
		if c1.SubscriptionID == nil || c1.BillableItemID != nil {
			t.Fatalf("monthly coupon %+v", c1)
		}
		s := b.subscription(t, b.live, *c1.SubscriptionID)
		if s.ProductID != month.ID || len(s.Cycles) != 1 || !s.Cycles[0].Ordered || !s.Cycles[0].ValidFrom.IsZero() ||
			s.Cycles[0].CouponActivated || s.Cycles[0].BillableItemID == nil || s.CancelRequestedAt != nil {
			t.Fatalf("subscription %+v", s)
		}
		mi, err := b.inv.BillableItem(b.ctx, b.live, *s.Cycles[0].BillableItemID)
		if err != nil {
			t.Fatal(err)
		}
		if mi.AmountCents != 4900 || deref(mi.SubscriptionID) != s.ID || deref(mi.CycleID) != s.Cycles[0].ID || deref(mi.CouponID) != c1.ID {
			t.Errorf("monthly item %+v", mi)
		}
		if n := b.counts(t); n["orders"] != 1 || n["coupons"] != 3 || n["billable_items"] != 3 || n["subscriptions"] != 1 ||
			n["subscription_cycles"] != 1 || n["tickets"] != 0 {
			t.Errorf("rows %v", n)
		}

		// Read back through the use case, and not by another account.
		got, err := b.app.Order(b.ctx, b.live, o.ID)
		if err != nil || got.ID != o.ID || len(got.Coupons) != 3 || got.RestoreSecret != o.RestoreSecret {
			t.Errorf("Order: %+v %v", got, err)
		}
		other, _ := b.newAccount(t, "Other AG", account.Live)
		_, err = b.app.Order(b.ctx, other, o.ID)
		wantErr(t, err, apperr.NotFound, "order_not_found")
		_, err = b.app.Order(b.ctx, b.test, o.ID)
		wantErr(t, err, apperr.NotFound, "order_not_found")
	})
}

// TestPlaceOrderRejects: bad orders name each offending entry and write nothing.
func TestPlaceOrderRejects(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		single, job := b.product(t, singleBerlin), b.product(t, jobTicket)
		many := make([]string, app.MaxProductsPerOrder+1)
		for i := range many {
			many[i] = single.ID
		}
		long := strings.Repeat("ü", app.MaxOrderReference+1)
		for _, c := range []struct {
			name   string
			req    app.OrderRequest
			code   string
			fields []string
		}{
			{"no products", app.OrderRequest{}, "invalid_product_ids", []string{"/product_ids"}},
			{"101 products", app.OrderRequest{ProductIDs: many}, "invalid_product_ids", []string{"/product_ids"}},
			{"unknown and restricted", app.OrderRequest{ProductIDs: []string{single.ID, "farebox-product-nope", job.ID}},
				"invalid_product_ids", []string{"/product_ids/1", "/product_ids/2"}},
			{"reference of 256 runes", app.OrderRequest{ProductIDs: []string{single.ID}, OptionalOrderReference: &long},
				"invalid_order_reference", []string{"/optional_order_reference"}},
		} {
			_, err := b.app.PlaceOrder(b.ctx, idempotency.Claim{}, b.live, c.req)
			wantFields(t, wantErr(t, err, apperr.Unprocessable, c.code), c.fields...)
		}
		if n := b.counts(t); n["orders"]+n["coupons"]+n["billable_items"] != 0 {
			t.Fatalf("rejected orders wrote %v", n)
		}

		// The limits themselves are accepted.
		ok := strings.Repeat("ü", app.MaxOrderReference)
		o, err := b.app.PlaceOrder(b.ctx, idempotency.Claim{}, b.live, app.OrderRequest{ProductIDs: many[:app.MaxProductsPerOrder], OptionalOrderReference: &ok})
		if err != nil || len(o.Coupons) != app.MaxProductsPerOrder || *o.OptionalOrderReference != ok {
			t.Fatalf("order at the limits: %d coupons, %v", len(o.Coupons), err)
		}
		// A grant lets the account order the restricted product.
		if err := b.products.Grant(b.ctx, idempotency.Claim{}, b.live.AccountID, job.ID); err != nil {
			t.Fatal(err)
		}
		if o := b.order(t, b.live, job.ID); o.Coupons[0].ProductID != job.ID || o.Coupons[0].SubscriptionID == nil {
			t.Errorf("granted job ticket order %+v", o.Coupons[0])
		}
	})
}

// TestActivateSingle: a first activation issues a ticket for the product's
// duration from now (or the requested start); the same medium gets the
// same ticket, another medium a 409; the window follows the clock.
func TestActivateSingle(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		single := b.product(t, singleBerlin)
		o := b.order(t, b.live, single.ID, single.ID, single.ID, single.ID, single.ID)
		c := o.Coupons

		b.clock.Advance(10 * time.Minute)
		now := b.clock.Now()
		tk := b.activate(t, c[0].ID, activation(""))
		if tk.CouponID != c[0].ID || tk.AccountID != b.live.AccountID || tk.ProductID != single.ID || tk.CycleID != "" ||
			!tk.ValidFrom.Equal(now) || !tk.ValidUntil.Equal(now.Add(120*time.Minute-time.Second)) ||
			tk.ReactivationKey != nil || tk.InvalidatedAt != nil || !tk.CreatedAt.Equal(now) {
			t.Fatalf("ticket %+v", tk)
		}
		if d, _ := b.app.Coupon(b.ctx, c[0].ID); !d.Coupon.Activated || !d.Window.Earliest.Equal(start) ||
			!d.Window.Latest.Equal(start.Add(30*24*time.Hour-time.Second)) || !d.Window.ActivatableUntil.Equal(start.Add(72*time.Hour)) {
			t.Errorf("coupon after activation %+v", d)
		}
		// The same medium with its keys in another order: the same ticket.
		again, err := b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c[0].ID, app.ActivationRequest{Version: 9,
			IdentificationMedium: json.RawMessage(`{"photo_id_lite":{"birth_date":"1990-01-01","last_name":"Mustermann","first_name":"Max"}}`)})
		if err != nil || again.TicketID != tk.ID {
			t.Errorf("repeat: %+v %v", again, err)
		}
		_, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c[0].ID, app.ActivationRequest{Version: 9,
			IdentificationMedium: json.RawMessage(`{"photo_id_lite":{"first_name":"Eve","last_name":"Mustermann","birth_date":"1990-01-01"}}`)})
		wantErr(t, err, apperr.Conflict, "coupon_already_activated")
		_, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c[1].ID, app.ActivationRequest{Version: 9})
		wantErr(t, err, apperr.Unprocessable, "identification_medium_invalid")

		// A requested start: within the clock skew before the order it moves
		// to the order time; earlier is too early.
		req := activation("")
		req.ActivationStart = start.Add(-validity.ClockSkew).Format(time.RFC3339)
		if tk := b.activate(t, c[1].ID, req); !tk.ValidFrom.Equal(start) {
			t.Errorf("start within the skew: from %v", tk.ValidFrom)
		}
		req.ActivationStart = start.Add(-validity.ClockSkew - time.Second).Format(time.RFC3339)
		_, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c[2].ID, req)
		wantFields(t, wantErr(t, err, apperr.Unprocessable, validity.CodeNotYet), validity.FieldStart)

		// 72 hours after the order v8 refuses; v7 still activates within the
		// product's 30-day horizon, and nobody after it.
		b.clock.Set(start.Add(72*time.Hour + time.Second))
		req = activation("")
		req.Version = 8
		_, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c[2].ID, req)
		wantErr(t, err, apperr.Unprocessable, validity.CodeWindowExpired)
		b.clock.Set(start.Add(72 * time.Hour))
		if _, err := b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c[2].ID, req); err != nil {
			t.Errorf("v8 at exactly 72 hours: %v", err)
		}
		b.clock.Set(start.Add(30*24*time.Hour - time.Second))
		req.Version = 7
		if tk := b.activate(t, c[3].ID, req); !tk.ValidFrom.Equal(b.clock.Now()) {
			t.Errorf("v7 on the last second: from %v", tk.ValidFrom)
		}
		b.clock.Advance(time.Second)
		_, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c[4].ID, req)
		wantErr(t, err, apperr.Unprocessable, validity.CodeAnymore)
		if n := b.count(t, "tickets"); n != 4 {
			t.Errorf("%d tickets, want 4", n)
		}
	})
}

// TestRestore: restoring activated coupons links old and new both ways,
// invalidates the old tickets at the clock's time, and the new coupon
// activates with an empty request into the original validity; billable
// items are untouched and bad requests change nothing.
func TestRestore(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		single, month := b.product(t, singleBerlin), b.product(t, monthly)
		o := b.order(t, b.live, single.ID, month.ID, single.ID)
		singleTk := b.activate(t, o.Coupons[0].ID, activation(""))
		monthTk := b.activate(t, o.Coupons[1].ID, activation(berlinTariff))
		oldSub := b.subscription(t, b.live, *o.Coupons[1].SubscriptionID)
		before := b.counts(t)

		restore := func(secret string, ids ...string) ([]string, error) {
			_, created, err := b.app.Restore(b.ctx, idempotency.Claim{}, b.live, o.ID, app.RestoreRequest{RestoreSecret: secret, CouponIDs: ids})
			var out []string
			for _, c := range created {
				out = append(out, c.ID)
			}
			return out, err
		}
		_, err := restore("farebox-restore-secret-wrong", o.Coupons[0].ID)
		wantErr(t, err, apperr.NotFound, "order_not_found")
		_, err = restore(o.RestoreSecret)
		wantFields(t, wantErr(t, err, apperr.Unprocessable, "invalid_coupon_ids"), "/coupon_ids")
		_, err = restore(o.RestoreSecret, o.Coupons[0].ID, "farebox-coupon-nope", o.Coupons[2].ID, o.Coupons[0].ID)
		wantFields(t, wantErr(t, err, apperr.Unprocessable, "invalid_coupon_ids"), "/coupon_ids/1", "/coupon_ids/2", "/coupon_ids/3")
		if after := b.counts(t); after["coupons"] != before["coupons"] || after["subscriptions"] != before["subscriptions"] {
			t.Fatalf("rejected restores wrote %v (before %v)", after, before)
		}

		b.clock.Advance(time.Hour)
		restoredAt := b.clock.Now()
		ids, err := restore(o.RestoreSecret, o.Coupons[0].ID, o.Coupons[1].ID)
		if err != nil || len(ids) != 2 {
			t.Fatalf("restore: %v %v", ids, err)
		}
		got, err := b.app.Order(b.ctx, b.live, o.ID)
		if err != nil || len(got.Coupons) != 5 {
			t.Fatalf("order after restore: %d coupons, %v", len(got.Coupons), err)
		}
		for i, id := range ids {
			old, err := b.app.Coupon(b.ctx, o.Coupons[i].ID)
			if err != nil {
				t.Fatal(err)
			}
			nc, err := b.app.Coupon(b.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if deref(old.Coupon.RestoredCouponID) != id || deref(nc.Coupon.OriginalCouponID) != old.Coupon.ID || nc.Coupon.Activated ||
				nc.Coupon.ProductID != old.Coupon.ProductID || deref(nc.Coupon.BillableItemID) != deref(old.Coupon.BillableItemID) ||
				!nc.Coupon.CreatedAt.Equal(restoredAt) {
				t.Errorf("coupon %d: old %+v new %+v", i, old.Coupon, nc.Coupon)
			}
		}
		for _, id := range []string{singleTk.ID, monthTk.ID} {
			if d := b.ticket(t, id); d.Valid || !deref(d.Ticket.InvalidatedAt).Equal(restoredAt) {
				t.Errorf("old ticket %s: valid %v, invalidated %v", id, d.Valid, d.Ticket.InvalidatedAt)
			}
		}
		// The new subscription copies the cycles; the old one points to it.
		newCoupon, _ := b.app.Coupon(b.ctx, ids[1])
		newSub := b.subscription(t, b.live, *newCoupon.Coupon.SubscriptionID)
		if deref(newSub.OriginalSubscriptionID) != oldSub.ID || len(newSub.Cycles) != len(oldSub.Cycles) ||
			deref(b.subscription(t, b.live, oldSub.ID).RestoredSubscriptionID) != newSub.ID {
			t.Errorf("subscriptions: old %+v new %+v", oldSub, newSub)
		}

		// An empty activation issues the original validity and identification.
		for i, old := range []struct{ from, until time.Time }{{singleTk.ValidFrom, singleTk.ValidUntil}, {monthTk.ValidFrom, monthTk.ValidUntil}} {
			tk := b.activate(t, ids[i], app.ActivationRequest{Version: 9})
			if !tk.ValidFrom.Equal(old.from) || !tk.ValidUntil.Equal(old.until) || string(tk.IdentificationMedium) != maxMedium ||
				tk.InvalidatedAt != nil || !b.ticket(t, tk.ID).Valid {
				t.Errorf("restored ticket %d: %+v", i, tk)
			}
			if i == 1 && (tk.ReactivationKey == nil || tk.CycleID == "" || tk.CycleID == monthTk.CycleID) {
				t.Errorf("restored monthly ticket: key %v cycle %q (old cycle %q)", tk.ReactivationKey, tk.CycleID, monthTk.CycleID)
			}
		}
		_, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, o.Coupons[0].ID, activation(""))
		wantErr(t, err, apperr.Unprocessable, "coupon_restored")
		_, err = restore(o.RestoreSecret, o.Coupons[0].ID)
		wantFields(t, wantErr(t, err, apperr.Unprocessable, "invalid_coupon_ids"), "/coupon_ids/0")
		if after := b.counts(t); after["billable_items"] != before["billable_items"] {
			t.Errorf("restore changed billable items: %d → %d", before["billable_items"], after["billable_items"])
		}
	})
}

// TestPlaceOrderResponseIsTheStoredOrder: the POST's answer, made from the
// values just written (the subscription is not read back), is byte for
// byte what a GET of the order answers, in every API version, for an order
// of a single ticket and a subscription.
func TestPlaceOrderResponseIsTheStoredOrder(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		req := app.OrderRequest{ProductIDs: []string{b.product(t, monthly).ID, b.product(t, singleBerlin).ID}}
		for version := 1; version <= 9; version++ {
			placed, err := b.app.PlaceOrderResponse(b.ctx, idempotency.Claim{}, b.live, req, version)
			if err != nil {
				t.Fatal(err)
			}
			stored, err := b.app.Order(b.ctx, b.live, placed.OrderID)
			if err != nil {
				t.Fatal(err)
			}
			read, err := b.app.OrderResponse(b.ctx, stored, version, true)
			if err != nil {
				t.Fatal(err)
			}
			pj, _ := json.Marshal(placed)
			rj, _ := json.Marshal(read)
			if string(pj) != string(rj) {
				t.Fatalf("version %d: POST answers\n%s\nGET answers\n%s", version, pj, rj)
			}
			if placed.RestoreSecret == "" || len(placed.Coupons) != 2 {
				t.Fatalf("version %d: answer without its restore secret or coupons: %s", version, pj)
			}
			if version >= 8 {
				samePlacedBytes(t, b, placed, read)
			}
		}
	})
}

// samePlacedBytes: the order POST's answer (v8 and later) comes encoded,
// byte for byte as the transport encodes the GET's answer read, and those
// are the bytes of its order.created event's object as a partner reads it
// (parts put back), with the restore secret the event leaves out.
func samePlacedBytes(t *testing.T, b *testBundle, placed, read app.OrderJSON) {
	t.Helper()
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	e.SetEscapeHTML(false) // as httpapi's writeJSON
	if err := e.Encode(read); err != nil {
		t.Fatal(err)
	}
	if string(placed.Encoded()) != enc.String() {
		t.Fatalf("the POST's encoded answer\n%s\nthe encoder's\n%s", placed.Encoded(), enc.Bytes())
	}
	evs := b.allEvents(t, b.live)
	created := evs[len(evs)-1]
	secret, err := json.Marshal(placed.RestoreSecret)
	if err != nil {
		t.Fatal(err)
	}
	withSecret := bytes.Replace(created.Data.Object, []byte(`,"environment":`), []byte(`,"restore_secret":`+string(secret)+`,"environment":`), 1)
	if created.Type != string(event.OrderCreated) || created.Data.ObjectID != placed.OrderID ||
		string(withSecret)+"\n" != string(placed.Encoded()) {
		t.Fatalf("order.created %s %s object\n%s\nwith the secret is not the POST's answer\n%s", created.Type, created.Data.ObjectID,
			created.Data.Object, placed.Encoded())
	}
}
