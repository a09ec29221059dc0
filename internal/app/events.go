package app

import (
	"context"
	"encoding/json"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/deliveries"
	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/engines"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// Events (docs/events.md). A use case that changes state collects the
// events of the change while it runs and writes them as the last step of
// its transaction (changeEvents.write): a change that fails writes none,
// and the account's sequence row is held only from there to the commit.
// The object of an event is the JSON the v9 GET of the object returns,
// made by the same view functions from values read inside the
// transaction.

// changeEvents are the events of one change of one account and environment.
type changeEvents struct {
	a   *App
	acc string
	env account.Environment
	at  time.Time // the events' time: the time of the changed objects (timeOf)
	evs []event.Event
}

// events collects the events of a change at the service's time.
func (a *App) events(acc string, env account.Environment) *changeEvents {
	return a.eventsAt(acc, env, a.clock.Now())
}

// eventsAt collects the events of a change of objects whose time is at
// (a test clock's: docs/test-clocks.md).
func (a *App) eventsAt(acc string, env account.Environment, at time.Time) *changeEvents {
	return &changeEvents{a: a, acc: acc, env: env, at: at}
}

// add records an event of type t about objectID showing obj.
func (c *changeEvents) add(t event.Type, objectID string, obj any) error {
	if ps := c.a.products.Parts(); ps != nil {
		obj = refer(ps, obj)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return apperr.Wrap("app.event", err)
	}
	c.addEncoded(t, objectID, products.WithMarkers(raw))
	return nil
}

// addEncoded records an event of type t about objectID whose object is
// raw, already encoded as add encodes it.
func (c *changeEvents) addEncoded(t event.Type, objectID string, raw []byte) {
	c.evs = append(c.evs, event.Event{ID: c.a.IDs.New("event"), AccountID: c.acc, Environment: c.env, Type: t,
		ObjectID: objectID, APIVersion: event.APIVersion, CreatedAt: c.at, Object: raw})
}

// write appends the collected events; call it last in the transaction.
// It also adds the events' webhook deliveries (deliveries.FanOut) when the
// account and environment has an enabled endpoint, which the insert
// itself checks.
func (c *changeEvents) write(ctx context.Context, q store.Q) error {
	hooks, err := q.InsertEvents(ctx, c.evs)
	return c.inserted(ctx, q, hooks, err)
}

// inserted finishes writing events that a store call inserted (InsertEvents,
// or InsertOrderRows with the order's rows): it fans them out when the
// call found an enabled endpoint (hooks) and passes on the call's error.
func (c *changeEvents) inserted(ctx context.Context, q store.Q, hooks bool, err error) error {
	if err != nil || !hooks {
		return err
	}
	return c.a.deliveries.FanOut(ctx, q, c.acc, c.env, c.evs)
}

// order adds order.created showing the new order o, from the values the
// order was built of (known: its new subscriptions by id), as its POST
// answers without the restore secret, and returns that view and the
// encoded object (the POST's answer is made of them: PlaceOrderResponse).
// q only reads what o does not hold. The object is encoded without
// reflection (appendOrder).
func (c *changeEvents) order(ctx context.Context, q store.Q, o ticketing.Order, known map[string]ticketing.Subscription) (view OrderJSON, obj []byte, err error) {
	if view, err = c.a.orderView(ctx, q, o, known, eventVersion, false); err != nil {
		return view, nil, err
	}
	if obj, err = appendOrder(make([]byte, 0, orderEventSize), c.a.products.Parts(), view); err != nil {
		return view, nil, apperr.Wrap("app.event", err)
	}
	c.addEncoded(event.OrderCreated, o.ID, obj)
	return view, obj, nil
}

// orderEventSize is room for most orders' event objects (a single ticket
// and a subscription take about 2.3 kB).
const orderEventSize = 4096

// coupon adds an event showing coupon id as GET …/coupons/{id}.json does.
func (c *changeEvents) coupon(ctx context.Context, q store.Q, t event.Type, id string) error {
	cp, err := q.Coupon(ctx, id)
	if err != nil {
		return err
	}
	d, err := c.a.couponDetails(ctx, q, cp)
	if err != nil {
		return err
	}
	return c.add(t, id, couponView(d, eventVersion))
}

// subscription adds an event showing subscription id.
func (c *changeEvents) subscription(ctx context.Context, q store.Q, t event.Type, id string) error {
	d, err := c.a.subscriptionDetails(ctx, q, id)
	if err != nil {
		return err
	}
	return c.add(t, id, subscriptionView(d))
}

// cancelledSubscription adds subscription.cancelled showing subscription
// id with its cancellation receipt, as the DELETE answers.
func (c *changeEvents) cancelledSubscription(ctx context.Context, q store.Q, p account.Principal, id string) error {
	v, err := c.a.cancelledView(ctx, q, p, id)
	if err != nil {
		return err
	}
	return c.add(event.SubscriptionCancelled, id, v)
}

// ticket adds ticket.issued showing ticket id (without the per-instance
// parts of GET …/tickets/{id}.json: the signed barcode in
// ticket.properties and the rendering options depend on the instance's
// keys and wallets and are computed when the ticket is read).
func (c *changeEvents) ticket(ctx context.Context, q store.Q, id string) error {
	d, err := c.a.ticketDetailsOf(ctx, q, id)
	if err != nil {
		return err
	}
	return c.add(event.TicketIssued, id, ticketView(d, engines.RenderingEngine().Version, []string{}, nil))
}

// eventVersion is the API version whose shapes events carry.
const eventVersion = 9

// Deliveries are the webhook deliveries the changes' events fan out to
// (the webhooks capability runs them and wakes on them: webhooks.New).
func (a *App) Deliveries() *deliveries.Service { return a.deliveries }

// EndSubscriptions writes subscription.ended for the subscriptions whose
// end has passed by now (the periodic events job, events.Service.Maintain).
func (a *App) EndSubscriptions(ctx context.Context, now time.Time) (int, error) {
	return a.endSubscriptions(ctx, "", now)
}
