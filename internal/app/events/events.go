// Package events is the read side of the platform events (docs/events.md):
// the list of an account's events, the periodic maintenance (subscriptions
// whose end has passed, pruning after event.Retention) and the shared
// parts of stored event objects (parts.go). Internal/app records the events
// of a change in its own transaction; the webhooks capability reads event
// bodies through this package. It reaches the database only through
// Queries.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/event"
)

// Queries are the store methods the events use (store.Q implements them;
// the wiring passes store.NewView[Queries]).
type Queries interface {
	EventSeq(ctx context.Context, accountID string, env account.Environment, id string) (int64, bool, error)
	Events(ctx context.Context, f event.Query, after, before int64) (event.Page, error)
	EventParts(ctx context.Context, hashes []string) (map[string][]byte, error)
	EventStreams(ctx context.Context) ([][2]string, error)
	PruneEvents(ctx context.Context, accountID string, env account.Environment, cutoff time.Time, limit int) (int64, error)
}

// DB is the database as the events see it (store.View).
type DB = kit.DB[Queries]

// SettledFunc is store.Store.SettledEventSeq: the sequence number up to
// which a stream is settled, and whether that bound applies (PostgreSQL).
type SettledFunc func(ctx context.Context, accountID string, env account.Environment) (seq int64, settled bool, err error)

// EndFunc writes subscription.ended for the subscriptions whose end has
// passed by now, and reports how many (internal/app owns subscriptions:
// the wiring hands in App.EndSubscriptions).
type EndFunc func(ctx context.Context, now time.Time) (int, error)

// Service holds the read side of the events.
type Service struct {
	kit.Base[DB]
	settled SettledFunc
	end     EndFunc
	parts   partCache
}

// New returns the events of db; c is the service clock (nil: the system
// clock), settled the store's settled bound of a stream, end (may be nil)
// what ends the subscriptions whose end has passed.
func New(db DB, c clock.Clock, settled SettledFunc, end EndFunc) *Service {
	if end == nil {
		end = func(context.Context, time.Time) (int, error) { return 0, nil }
	}
	return &Service{Base: kit.NewBase(db, c, ""), settled: settled, end: end}
}

// Request is GET /v1/events.json's query, as sent.
type Request struct {
	Limit         string
	StartingAfter string
	EndingBefore  string
	Type          string
	CreatedGTE    string
	CreatedLT     string
}

// List lists the caller's events of its environment, newest first, one
// page at a time. Every parameter problem is a 400 invalid_parameter naming the parameter.
func (s *Service) List(ctx context.Context, p account.Principal, req Request) (event.Page, error) {
	const op = "events.List"
	var l kit.ListParams
	lr := kit.ListRequest{Limit: req.Limit, StartingAfter: req.StartingAfter, EndingBefore: req.EndingBefore,
		CreatedGTE: req.CreatedGTE, CreatedLT: req.CreatedLT}
	f := event.Query{AccountID: p.AccountID, Environment: p.Environment, Limit: l.Limit(req.Limit), Type: event.Type(req.Type)}
	if req.Type != "" && !event.Known(f.Type) {
		l.Bad("type", fmt.Sprintf("unknown event type %q (see docs/events.md)", req.Type))
	}
	f.CreatedGTE, f.CreatedLT = l.Timestamp("created[gte]", req.CreatedGTE), l.Timestamp("created[lt]", req.CreatedLT)
	var after, before int64
	err := l.Cursors(lr, "event", " (or it is older than the retention period)", func(field, id string) (bool, error) {
		seq, ok, err := s.DB.Read().EventSeq(ctx, p.AccountID, p.Environment, id)
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
	settled, capped, err := s.settled(ctx, p.AccountID, p.Environment)
	if err != nil {
		return event.Page{}, err
	}
	if capped {
		f.Settled = &settled
	}
	page, err := s.DB.Read().Events(ctx, f, after, before)
	if err != nil {
		return page, err
	}
	objs := make([][]byte, len(page.Events))
	for i, e := range page.Events {
		objs[i] = e.Object
	}
	if err := s.Expand(ctx, objs); err != nil {
		return event.Page{}, err
	}
	for i := range page.Events {
		page.Events[i].Object = objs[i]
	}
	return page, nil
}

// Maintain is the periodic events job every instance runs:
// subscription.ended for subscriptions whose end has passed (each once,
// in the transaction that marks it), then the pruning of events older than
// event.Retention. It reports how many it wrote and deleted.
func (s *Service) Maintain(ctx context.Context) (ended int, pruned int64, err error) {
	now := s.Clock.Now()
	if ended, err = s.end(ctx, now); err != nil {
		return ended, pruned, err
	}
	cutoff := now.Add(-event.Retention)
	streams, err := s.DB.Read().EventStreams(ctx)
	if err != nil {
		return ended, pruned, err
	}
	for _, st := range streams {
		for {
			var n int64
			err := s.DB.Write(ctx, func(q Queries) error {
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

// Bodies are the JSON of events as GET /v1/events.json shows each of
// them, their shared parts read at once (a webhook delivery's body).
func (s *Service) Bodies(ctx context.Context, evs []event.Event) ([][]byte, error) {
	objs := make([][]byte, len(evs))
	for i, e := range evs {
		objs[i] = e.Object
	}
	if err := s.Expand(ctx, objs); err != nil {
		return nil, err
	}
	out := make([][]byte, len(evs))
	for i, e := range evs {
		e.Object = objs[i]
		b, err := json.Marshal(view(e))
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// EventJSON is an event as GET /v1/events.json shows it.
type EventJSON struct {
	ID          string        `json:"id"`
	Object      string        `json:"object"`
	Type        string        `json:"type"`
	Created     kit.Timestamp `json:"created"`
	Environment string        `json:"environment"`
	APIVersion  string        `json:"api_version"`
	Data        DataJSON      `json:"data"`
	Sequence    int64         `json:"sequence"`
}

// DataJSON is an event's object and its id.
type DataJSON struct {
	ObjectID string          `json:"object_id"`
	Object   json.RawMessage `json:"object"`
}

// ListJSON is the answer of GET /v1/events.json.
type ListJSON struct {
	Object  string      `json:"object"`
	Data    []EventJSON `json:"data"`
	HasMore bool        `json:"has_more"`
}

// Response is a page of events as GET /v1/events.json answers it.
func Response(p event.Page) ListJSON {
	out := ListJSON{Object: "list", Data: make([]EventJSON, 0, len(p.Events)), HasMore: p.HasMore}
	for _, e := range p.Events {
		out.Data = append(out.Data, view(e))
	}
	return out
}

func view(e event.Event) EventJSON {
	return EventJSON{ID: e.ID, Object: "event", Type: string(e.Type), Created: kit.Timestamp(e.CreatedAt),
		Environment: string(e.Environment), APIVersion: e.APIVersion, Sequence: e.Seq,
		Data: DataJSON{ObjectID: e.ObjectID, Object: e.Object}}
}
