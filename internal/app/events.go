package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
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
	if st := c.a.catalog.Load(); st != nil {
		obj = st.parts.refer(obj)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return apperr.Wrap("app.event", err)
	}
	raw = withMarkers(raw)
	c.evs = append(c.evs, event.Event{ID: c.a.IDs.New("event"), AccountID: c.acc, Environment: c.env, Type: t,
		ObjectID: objectID, APIVersion: event.APIVersion, CreatedAt: c.at, Object: raw})
	return nil
}

// write appends the collected events; call it last in the transaction.
// It also adds the events' webhook deliveries (fanOut) when the account
// and environment has an enabled endpoint, which the insert itself checks.
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
	return c.fanOut(ctx, q)
}

// order adds order.created showing the new order o, from the values the
// order was built of (known: its new subscriptions by id), as its POST
// answers without the restore secret. q only reads what o does not hold.
func (c *changeEvents) order(ctx context.Context, q store.Q, o ticketing.Order, known map[string]ticketing.Subscription) error {
	view, err := c.a.orderView(ctx, q, o, known, eventVersion, false)
	if err != nil {
		return err
	}
	return c.add(event.OrderCreated, o.ID, view)
}

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
	return c.add(event.TicketIssued, id, ticketView(d, RenderingEngineVersion(), []string{}, nil))
}

// eventVersion is the API version whose shapes events carry.
const eventVersion = 9

// EventsRequest is GET /v1/events.json's query, as sent.
type EventsRequest struct {
	Limit         string
	StartingAfter string
	EndingBefore  string
	Type          string
	CreatedGTE    string
	CreatedLT     string
}

// Events lists the caller's events of its environment, newest first, one
// page at a time. Every parameter problem is a 400 invalid_parameter naming the parameter.
func (a *App) Events(ctx context.Context, p account.Principal, req EventsRequest) (event.Page, error) {
	const op = "app.Events"
	var l listParams
	lr := ListRequest{Limit: req.Limit, StartingAfter: req.StartingAfter, EndingBefore: req.EndingBefore,
		CreatedGTE: req.CreatedGTE, CreatedLT: req.CreatedLT}
	f := event.Query{AccountID: p.AccountID, Environment: p.Environment, Limit: l.Limit(req.Limit), Type: event.Type(req.Type)}
	if req.Type != "" && !event.Known(f.Type) {
		l.Bad("type", fmt.Sprintf("unknown event type %q (see docs/events.md)", req.Type))
	}
	f.CreatedGTE, f.CreatedLT = l.Timestamp("created[gte]", req.CreatedGTE), l.Timestamp("created[lt]", req.CreatedLT)
	var after, before int64
	err := l.Cursors(lr, "event", " (or it is older than the retention period)", func(field, id string) (bool, error) {
		seq, ok, err := a.store.Read().EventSeq(ctx, p.AccountID, p.Environment, id)
		if field == "starting_after" {
			after = seq
		} else {
			before = seq
		}
		return ok, err
	})
	if err != nil {
		return event.Page{}, err
	}
	if err := l.Err(op); err != nil {
		return event.Page{}, err
	}
	// Only the settled part of the stream: an event that commits after
	// this page with a smaller number than one shown would be skipped by a
	// partner polling with ending_before (docs/events.md).
	settled, capped, err := a.store.SettledEventSeq(ctx, p.AccountID, p.Environment)
	if err != nil {
		return event.Page{}, err
	}
	if capped {
		f.Settled = &settled
	}
	page, err := a.store.Read().Events(ctx, f, after, before)
	if err != nil {
		return page, err
	}
	objs := make([][]byte, len(page.Events))
	for i, e := range page.Events {
		objs[i] = e.Object
	}
	if err := a.expandParts(ctx, objs); err != nil {
		return event.Page{}, err
	}
	for i := range page.Events {
		page.Events[i].Object = objs[i]
	}
	return page, nil
}

// EventMaintenance is the periodic events job every instance runs:
// subscription.ended for subscriptions whose end has passed (each once,
// in the transaction that marks it), then the pruning of events older than
// event.Retention. It reports how many it wrote and deleted.
func (a *App) EventMaintenance(ctx context.Context) (ended int, pruned int64, err error) {
	now := a.clock.Now()
	if ended, err = a.endSubscriptions(ctx, "", now); err != nil {
		return ended, pruned, err
	}
	cutoff := now.Add(-event.Retention)
	streams, err := a.store.Read().EventStreams(ctx)
	if err != nil {
		return ended, pruned, err
	}
	for _, st := range streams {
		for {
			var n int64
			err := a.store.Write(ctx, func(q store.Q) error {
				var err error
				n, err = q.PruneEvents(ctx, st[0], account.Environment(st[1]), cutoff, 1000)
				return err
			})
			if err != nil {
				return ended, pruned, err
			}
			pruned += n
			if n < 1000 {
				break
			}
		}
	}
	return ended, pruned, nil
}

// EventJSON is an event as GET /v1/events.json shows it.
type EventJSON struct {
	ID          string        `json:"id"`
	Object      string        `json:"object"`
	Type        string        `json:"type"`
	Created     timestamp     `json:"created"`
	Environment string        `json:"environment"`
	APIVersion  string        `json:"api_version"`
	Data        eventDataJSON `json:"data"`
	Sequence    int64         `json:"sequence"`
}

type eventDataJSON struct {
	ObjectID string          `json:"object_id"`
	Object   json.RawMessage `json:"object"`
}

// EventListJSON is the answer of GET /v1/events.json.
type EventListJSON struct {
	Object  string      `json:"object"`
	Data    []EventJSON `json:"data"`
	HasMore bool        `json:"has_more"`
}

// EventsResponse is a page of events.
func EventsResponse(p event.Page) EventListJSON {
	out := EventListJSON{Object: "list", Data: make([]EventJSON, 0, len(p.Events)), HasMore: p.HasMore}
	for _, e := range p.Events {
		out.Data = append(out.Data, EventJSON{ID: e.ID, Object: "event", Type: string(e.Type), Created: timestamp(e.CreatedAt),
			Environment: string(e.Environment), APIVersion: e.APIVersion, Sequence: e.Seq,
			Data: eventDataJSON{ObjectID: e.ObjectID, Object: e.Object}})
	}
	return out
}
