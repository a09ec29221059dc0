package app

import (
	"context"

	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/engines"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// The API's response shapes. The JSON-tagged types of views.go,
// ticketing_views.go and invoicing_views.go are the interface's objects
// (api/openapi.yaml, client-contract.md); they are made here from the
// domain values the use cases return, so the transport writes them without
// naming a domain type. A handler passes a use case's result straight to
// one of these functions and encodes what comes back.

// Request inputs the transport decodes into (app-level names of domain
// inputs).
type (
	// InvoiceTexts are the optional texts of an invoice.
	InvoiceTexts = invoicedoc.Texts
)

// CouponResponse is a Coupon in the shape of API version, as reader sees
// it: the coupon's owner (a key of its account and environment) sees
// restored_coupon_id and restored_subscription_id; anyone else (no key, as
// the SDKs read, or another account's key) sees neither key (keylessCoupon):
// a restore cuts off the lost or stolen phone, and the new coupon's id is
// the capability that activates it with {} (docs/ticketing.md, "Restore").
func CouponResponse(d CouponDetails, version int, reader *Principal) any {
	v := couponView(d, version)
	if reader != nil && reader.AccountID == d.Coupon.AccountID && reader.Environment == d.Coupon.Environment {
		return v
	}
	return keylessCoupon(v)
}

// SubscriptionResponse is a Subscription.
func SubscriptionResponse(d SubscriptionDetails) SubscriptionJSON { return subscriptionView(d) }

// OrderResponse is order o with all its coupons in the shape of API
// version; the restore secret only when withSecret.
func (a *App) OrderResponse(ctx context.Context, o ticketing.Order, version int, withSecret bool) (OrderJSON, error) {
	return a.orderView(ctx, a.store.Read(), o, nil, version, withSecret)
}

// orderView is OrderResponse reading through q (inside a transaction for
// the order.created event).
func (a *App) orderView(ctx context.Context, q store.Q, o ticketing.Order, known map[string]ticketing.Subscription,
	version int, withSecret bool) (OrderJSON, error) {
	details, err := a.orderCoupons(ctx, q, o, known)
	if err != nil {
		return OrderJSON{}, err
	}
	out := OrderJSON{OrderID: o.ID, OptionalOrderReference: o.OptionalOrderReference, Environment: string(o.Environment), Coupons: []CouponJSON{},
		TestClock: o.TestClockID}
	if withSecret {
		out.RestoreSecret = o.RestoreSecret
	}
	for _, d := range details {
		out.Coupons = append(out.Coupons, couponView(d, version))
	}
	if len(out.Coupons) > 0 {
		out.CouponID = out.Coupons[0].ID
	}
	return out, nil
}

// RestoreResponse is order o with the coupons a restore made (Restore
// returns at least one), without the restore secret.
func (a *App) RestoreResponse(ctx context.Context, o ticketing.Order, coupons []ticketing.Coupon, version int) (OrderJSON, error) {
	out := OrderJSON{OrderID: o.ID, OptionalOrderReference: o.OptionalOrderReference, Environment: string(o.Environment), Coupons: []CouponJSON{}}
	for _, c := range coupons {
		d, err := a.Coupon(ctx, c.ID)
		if err != nil {
			return OrderJSON{}, err
		}
		out.Coupons = append(out.Coupons, couponView(d, version))
	}
	out.CouponID = out.Coupons[0].ID
	return out, nil
}

// TicketResponse is the Ticket d with what offers gives it: its signed
// barcode, rendering options and the wallets withheld (wallets.Service.Offer).
func TicketResponse(d TicketDetails, offers passes.Offers) (ticketJSON, error) {
	o, err := offers(d)
	if err != nil {
		return ticketJSON{}, err
	}
	j := ticketView(d, engines.RenderingEngine().Version, o.Options, o.Properties)
	j.Ticket.Meta.UnavailableRenderingOptions = o.Unavailable
	return j, nil
}
