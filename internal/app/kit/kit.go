// Package kit is the shared kernel of the use-case packages
// (docs/architecture.md, "Use cases by capability"): the API's timestamp
// and the paging every list shares (docs/lists.md), and the Base every
// capability service embeds (base.go). It sits below
// internal/app and the capability packages, so they share it without
// importing each other.
package kit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/list"
)

// Timestamp marshals as RFC 3339 UTC with whole seconds: the SDKs
// force-parse these fields and break on fractions (client-contract.md 4).
type Timestamp time.Time

// MarshalJSON writes the timestamp as clock.Timestamp does.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return json.Marshal(clock.Timestamp(time.Time(t)))
}

// TimestampPtr is t as a Timestamp, nil for nil or the zero time.
func TimestampPtr(t *time.Time) *Timestamp {
	if t == nil || t.IsZero() {
		return nil
	}
	v := Timestamp(*t)
	return &v
}

// Lists share the conventions of GET /v1/events.json: limit 1–100
// (default 10), starting_after or ending_before naming a record of the
// caller's account and environment, created[gte] and created[lt], newest
// first, and every parameter problem a 400 invalid_parameter naming the
// parameter.

// ListRequest is the paging part of a list request, as sent.
type ListRequest struct {
	Limit         string
	StartingAfter string
	EndingBefore  string
	CreatedGTE    string
	CreatedLT     string
}

// ListParams collects the problems of one list request's parameters.
type ListParams struct {
	probs []apperr.FieldError
}

// Bad records a problem of parameter field.
func (l *ListParams) Bad(field, msg string) {
	l.probs = append(l.probs, apperr.FieldError{Field: field, Message: msg})
}

// Limit is the page size v asks for (event.DefaultLimit when empty).
func (l *ListParams) Limit(v string) int {
	if v == "" {
		return event.DefaultLimit
	}
	var n int
	if _, err := fmt.Sscanf(v, "%d", &n); err != nil || fmt.Sprint(n) != v || n < 1 || n > event.MaxLimit {
		l.Bad("limit", fmt.Sprintf("limit must be an integer from 1 to %d", event.MaxLimit))
		return event.DefaultLimit
	}
	return n
}

// Timestamp is the RFC 3339 instant v of parameter field, nil when empty.
func (l *ListParams) Timestamp(field, v string) *time.Time {
	if v == "" {
		return nil
	}
	t, err := clock.ParseTimestamp(v)
	if err != nil {
		l.Bad(field, field+" must be an RFC 3339 timestamp such as 2026-06-01T00:00:00Z")
		return nil
	}
	return &t
}

// Cursors resolves starting_after and ending_before (at most one may be
// sent) with resolve, which says whether the id names a record of the
// caller's account and environment; noun and note word the refusal. They
// are resolved only when every other parameter is good.
func (l *ListParams) Cursors(req ListRequest, noun, note string, resolve func(field, id string) (bool, error)) error {
	if req.StartingAfter != "" && req.EndingBefore != "" {
		l.Bad("ending_before", "send starting_after or ending_before, not both")
	}
	for _, c := range []struct{ field, id string }{{"starting_after", req.StartingAfter}, {"ending_before", req.EndingBefore}} {
		if c.id == "" || len(l.probs) > 0 {
			continue
		}
		ok, err := resolve(c.field, c.id)
		if err != nil {
			return err
		}
		if !ok {
			l.Bad(c.field, fmt.Sprintf("%s: no %s %q in this account and environment%s", c.field, noun, c.id, note))
		}
	}
	return nil
}

// Err is the 400 invalid_parameter of the problems found, nil without.
func (l *ListParams) Err(op string) error {
	if len(l.probs) == 0 {
		return nil
	}
	return apperr.E(op, apperr.Invalid, apperr.CodeInvalidParameter, l.probs[0].Message).WithDetails(l.probs...)
}

// CursorReader resolves a list cursor (store.Q implements it).
type CursorReader interface {
	ListCursor(ctx context.Context, table, accountID string, env account.Environment, id string) (list.Cursor, bool, error)
}

// ListQuery reads the common parameters of a list of table's records
// (named noun in refusals) into a store query; the caller adds its own
// problems to l and asks l.Err when done.
func ListQuery(ctx context.Context, r CursorReader, p account.Principal, table, noun string, req ListRequest, l *ListParams) (list.Query, error) {
	lq := list.Query{AccountID: p.AccountID, Environment: p.Environment, Limit: l.Limit(req.Limit),
		CreatedGTE: l.Timestamp("created[gte]", req.CreatedGTE), CreatedLT: l.Timestamp("created[lt]", req.CreatedLT)}
	err := l.Cursors(req, noun, "", func(field, id string) (bool, error) {
		c, ok, err := r.ListCursor(ctx, table, p.AccountID, p.Environment, id)
		if ok && field == "starting_after" {
			lq.After = &c
		} else if ok {
			lq.Before = &c
		}
		return ok, err
	})
	return lq, err
}

// ListJSON is the answer of a list: a page of objects as their GET shows
// them, newest first.
type ListJSON[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
}

// ListOf is a list answer of data (never a null data).
func ListOf[T any](data []T, hasMore bool) ListJSON[T] {
	if data == nil {
		data = []T{}
	}
	return ListJSON[T]{Object: "list", Data: data, HasMore: hasMore}
}

// RunList finishes a list request whose own parameters are read into l
// and the filter: it reads the common ones into *lq (through r), refuses
// the problems found (400 invalid_parameter), reads the page and shows
// each record.
func RunList[D CursorReader, R, T any](ctx context.Context, r D, p account.Principal, op, table, noun string, req ListRequest, l *ListParams,
	lq *list.Query, read func(D) (list.Page[R], error), view func(R) (T, error)) (ListJSON[T], error) {
	var err error
	if *lq, err = ListQuery(ctx, r, p, table, noun, req, l); err != nil {
		return ListJSON[T]{}, err
	}
	if err := l.Err(op); err != nil {
		return ListJSON[T]{}, err
	}
	page, err := read(r)
	if err != nil {
		return ListJSON[T]{}, err
	}
	out := make([]T, 0, len(page.Items))
	for _, it := range page.Items {
		v, err := view(it)
		if err != nil {
			return ListJSON[T]{}, err
		}
		out = append(out, v)
	}
	return ListOf(out, page.HasMore), nil
}

// ClockReader reads a test clock's frozen time (store.Q implements it).
type ClockReader interface {
	TestClockTime(ctx context.Context, id string) (time.Time, error)
}

// TimeOf is the current time of an object bound to test clock clockID:
// c's for nil, the test clock's frozen time otherwise (read through q, so
// inside a transaction it is the time the transaction sees;
// docs/test-clocks.md).
func TimeOf(ctx context.Context, q ClockReader, c clock.Clock, clockID *string) (time.Time, error) {
	if clockID == nil {
		return c.Now(), nil
	}
	return q.TestClockTime(ctx, *clockID)
}

// Each is view applied to every element of in; a nil in stays nil (an
// absent list answers null, an empty one []).
func Each[S, T any](in []S, view func(S) T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i, x := range in {
		out[i] = view(x)
	}
	return out
}
