package app

import (
	"context"
	"encoding/json"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/idempotency"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/schema"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/subscription"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/farebox/farebox/internal/validity"
)

// CouponDetails is a coupon with everything its JSON shows.
type CouponDetails struct {
	Coupon              ticketing.Coupon
	Product             *catalog.Product
	Area                *catalog.AreaEntry
	Window              validity.ActivationWindow
	TariffSettingsValid *bool // nil when the product takes no tariff settings
	Subscription        *SubscriptionDetails
}

// SubscriptionDetails is a subscription with the rules' view at now.
type SubscriptionDetails struct {
	Subscription ticketing.Subscription
	View         subscription.View
	// Listed are the cycles to show in chronological order, without those
	// that ended without a ticket: Android picks the first ordered, not
	// activated cycle of the list as its reactivation target.
	Listed []subscription.Cycle
}

// Coupon returns a coupon by id; the id is the credential (no key).
func (a *App) Coupon(ctx context.Context, id string) (CouponDetails, error) {
	c, err := a.store.Read().Coupon(ctx, id)
	if err != nil {
		return CouponDetails{}, err
	}
	return a.couponDetails(ctx, a.store.Read(), c)
}

func (a *App) couponDetails(ctx context.Context, q store.Q, c ticketing.Coupon) (CouponDetails, error) {
	return a.couponDetailsKnown(ctx, q, c, nil)
}

// couponDetailsKnown is couponDetails taking the coupon's subscription
// from known when it is there (PlaceOrder's event: just written, no need
// to read it back).
func (a *App) couponDetailsKnown(ctx context.Context, q store.Q, c ticketing.Coupon, known map[string]ticketing.Subscription) (CouponDetails, error) {
	const op = "app.couponDetails"
	d := CouponDetails{Coupon: c}
	var ok bool
	if d.Product, ok = a.Catalog().Product(c.ProductID); !ok {
		return d, apperr.E(op, apperr.Internal, CodeProductMissing, "the coupon's product is not in the catalog")
	}
	if d.Area, ok = a.Catalog().Area(d.Product.AreaID); !ok {
		return d, apperr.E(op, apperr.Internal, CodeAreaMissing, "the product's area is not in the catalog")
	}
	def, err := validity.FromProduct(d.Product.DurationDefinition, d.Product.DurationInMinutes, d.Product.ValidityInMinutes, d.Product.TicketType)
	if err != nil {
		return d, apperr.Wrap(op, err)
	}
	d.Window = validity.Activation(def, c.CreatedAt, a.Loc)
	if d.Product.HasTariffSettings() {
		valid := false
		if !isAbsent(c.TariffSettings) {
			if s, err := a.schemas.Get(d.Product.TariffSettingsSchema); err == nil {
				valid = schema.TariffSettings.Check(op, s, c.TariffSettings) == nil
			}
		}
		d.TariffSettingsValid = &valid
	}
	if c.SubscriptionID != nil {
		s, ok := known[*c.SubscriptionID]
		if !ok {
			var err error
			if s, err = q.Subscription(ctx, "", "", *c.SubscriptionID); err != nil {
				return d, err
			}
		}
		now, err := a.timeOf(ctx, q, s.TestClockID)
		if err != nil {
			return d, err
		}
		sd := a.subscriptionDetailsOf(s, now)
		d.Subscription = &sd
	}
	return d, nil
}

func (a *App) subscriptionDetails(ctx context.Context, q store.Q, id string) (SubscriptionDetails, error) {
	s, err := q.Subscription(ctx, "", "", id)
	if err != nil {
		return SubscriptionDetails{}, err
	}
	now, err := a.timeOf(ctx, q, s.TestClockID)
	if err != nil {
		return SubscriptionDetails{}, err
	}
	return a.subscriptionDetailsOf(s, now), nil
}

// subscriptionDetailsOf is the view of s at now, the subscription's time
// (timeOf).
func (a *App) subscriptionDetailsOf(s ticketing.Subscription, now time.Time) SubscriptionDetails {
	st := subState(s)
	d := SubscriptionDetails{Subscription: s, View: subscription.Describe(st, now, a.Loc)}
	for _, i := range subscription.Chronological(st.Cycles) {
		if c := st.Cycles[i]; !c.Ended(now) || c.CouponActivated {
			d.Listed = append(d.Listed, c)
		}
	}
	return d
}

// SubscriptionDetails returns one of the caller's subscriptions with its view.
func (a *App) SubscriptionDetails(ctx context.Context, p account.Principal, id string) (SubscriptionDetails, error) {
	if _, err := a.store.Read().Subscription(ctx, p.AccountID, p.Environment, id); err != nil {
		return SubscriptionDetails{}, err
	}
	return a.subscriptionDetails(ctx, a.store.Read(), id)
}

// OrderCoupons returns the details of every coupon of an order.
func (a *App) OrderCoupons(ctx context.Context, o ticketing.Order) ([]CouponDetails, error) {
	return a.orderCoupons(ctx, a.store.Read(), o, nil)
}

func (a *App) orderCoupons(ctx context.Context, q store.Q, o ticketing.Order, known map[string]ticketing.Subscription) ([]CouponDetails, error) {
	out := make([]CouponDetails, 0, len(o.Coupons))
	for _, c := range o.Coupons {
		d, err := a.couponDetailsKnown(ctx, q, c, known)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// SetTariffSettings validates and stores a coupon's tariff settings; they
// may be set again until the coupon is activated.
func (a *App) SetTariffSettings(ctx context.Context, claim idempotency.Claim, couponID string, ts json.RawMessage) (CouponDetails, error) {
	const op = "app.SetTariffSettings"
	var out CouponDetails
	err := a.store.WriteClaimed(ctx, claim, func(q store.Q) error {
		c, err := q.Coupon(ctx, couponID)
		if err != nil {
			return err
		}
		pr, ok := a.Catalog().Product(c.ProductID)
		if !ok {
			return apperr.E(op, apperr.Internal, CodeProductMissing, "the coupon's product is not in the catalog")
		}
		if !pr.HasTariffSettings() {
			return schema.TariffSettings.Error(op, []schema.Problem{{Message: "this product takes no tariff settings"}})
		}
		s, err := a.schemas.Get(pr.TariffSettingsSchema)
		if err != nil {
			return apperr.Wrap(op, err)
		}
		if err := schema.TariffSettings.Check(op, s, ts); err != nil {
			return err
		}
		if err := q.SetCouponTariffSettings(ctx, c.ID, ts); err != nil {
			return err
		}
		c.TariffSettings = ts
		if out, err = a.couponDetails(ctx, q, c); err != nil {
			return err
		}
		now, err := a.timeOf(ctx, q, c.TestClockID)
		if err != nil {
			return err
		}
		ev := a.eventsAt(c.AccountID, c.Environment, now)
		if err := ev.add(event.CouponTariffSettingsUpdated, c.ID, couponView(out, eventVersion)); err != nil {
			return err
		}
		return ev.write(ctx, q)
	})
	return out, err
}

// TicketDetails is a ticket with its coupon, product and area (what the
// wallets draw its barcode and passes from: package passes).
type TicketDetails = passes.TicketDetails

// Ticket returns a ticket by id; the id is the credential.
func (a *App) Ticket(ctx context.Context, id string) (TicketDetails, error) {
	return a.ticketDetailsOf(ctx, a.store.Read(), id)
}

// Now is the app clock's time (views compute states such as "expired" with it).
func (a *App) Now() time.Time { return a.clock.Now() }

// ticketDetailsOf is Ticket inside a transaction.
func (a *App) ticketDetailsOf(ctx context.Context, q store.Q, id string) (TicketDetails, error) {
	t, err := q.Ticket(ctx, id)
	if err != nil {
		return TicketDetails{}, err
	}
	return a.ticketDetails(ctx, q, t)
}

// ticketDetails completes a ticket already read with its coupon and
// catalog entries.
func (a *App) ticketDetails(ctx context.Context, q store.Q, t ticketing.Ticket) (TicketDetails, error) {
	const op = "app.Ticket"
	c, err := q.Coupon(ctx, t.CouponID)
	if err != nil {
		return TicketDetails{}, err
	}
	d := TicketDetails{Ticket: t, Coupon: c, Valid: t.InvalidatedAt == nil}
	var ok bool
	if d.Product, ok = a.Catalog().Product(t.ProductID); !ok {
		return d, apperr.E(op, apperr.Internal, CodeProductMissing, "the ticket's product is not in the catalog")
	}
	if d.Area, ok = a.Catalog().Area(d.Product.AreaID); !ok {
		return d, apperr.E(op, apperr.Internal, CodeAreaMissing, "the product's area is not in the catalog")
	}
	return d, nil
}
