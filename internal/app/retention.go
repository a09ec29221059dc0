package app

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/retention"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// DefaultRetentionBatch is how many rows one retention transaction
// changes: small, so that on SQLite (one writer) a request waits at most
// one short batch (docs/privacy.md has the measurements).
const DefaultRetentionBatch = 500

// DefaultRetentionYield: after each full batch the job pauses as long as
// the batch took (docs/privacy.md has the measurements with and without).
const DefaultRetentionYield = 1.0

// RetentionPolicy is the configured retention of each class.
func (a *App) RetentionPolicy() retention.Policy { return a.retention }

// RetentionReport is what a retention run did (or, dry, would do).
type RetentionReport struct {
	DryRun bool
	// IdentificationCutoff: tickets whose validity ended before it lose
	// their identification data.
	IdentificationCutoff time.Time
	Due                  retention.Due // counted before the run
	Tickets, Coupons     int64         // erased by the run
	Customers, Events    int64
	Batches              int
	Took                 time.Duration
}

// RunRetention applies the retention classes (docs/privacy.md): the
// identification data of tickets whose validity ended more than the
// identification period ago, the tariff settings of their coupons, the
// recipient data of customers whose restriction ended, and the personal
// data in the oldest kept events. Each batch is its own short write
// transaction of at most a.retentionBatch rows. Issued documents are
// never touched. With dryRun it only counts.
func (a *App) RunRetention(ctx context.Context, dryRun bool) (RetentionReport, error) {
	start := time.Now()
	now := a.clock.Now()
	cut := a.retention.IdentificationCutoff(now)
	r := RetentionReport{DryRun: dryRun, IdentificationCutoff: cut}
	due, err := a.store.Read().RetentionDue(ctx, cut, now, a.retention.BillingCutoff(now, a.Loc))
	if err != nil {
		return r, err
	}
	r.Due = due
	if dryRun {
		r.Took = time.Since(start)
		return r, nil
	}
	n := a.retentionBatch
	var cur retention.TicketCursor
	for {
		var k int
		t0 := time.Now()
		if err := a.store.Write(ctx, func(q store.Q) error {
			var err error
			k, cur, err = q.EraseExpiredTickets(ctx, cut, cur, n)
			return err
		}); err != nil {
			return r, err
		}
		r.Tickets += int64(k)
		r.Batches++
		if k < n {
			break
		}
		if err := a.yieldWriter(ctx, t0); err != nil {
			return r, err
		}
	}
	if err := a.batches(ctx, &r, &r.Coupons, func(q store.Q) (int64, error) { return q.EraseExpiredCouponSettings(ctx, cut, n) }); err != nil {
		return r, err
	}
	if err := a.batches(ctx, &r, &r.Customers, func(q store.Q) (int64, error) { return q.EraseRestrictedCustomers(ctx, now, n) }); err != nil {
		return r, err
	}
	ev, err := a.redactOldEvents(ctx, cut)
	r.Events = ev
	r.Took = time.Since(start)
	return r, err
}

// batches runs step in write transactions until one changes fewer rows
// than a batch, adding the count to *total.
func (a *App) batches(ctx context.Context, r *RetentionReport, total *int64, step func(q store.Q) (int64, error)) error {
	for {
		var k int64
		t0 := time.Now()
		if err := a.store.Write(ctx, func(q store.Q) error {
			var err error
			k, err = step(q)
			return err
		}); err != nil {
			return err
		}
		*total += k
		r.Batches++
		if k < int64(a.retentionBatch) {
			return nil
		}
		if err := a.yieldWriter(ctx, t0); err != nil {
			return err
		}
	}
}

// yieldWriter pauses after a full batch that started at t0 for as long as
// the batch took (RetentionYield times), so the job holds the database's
// writer (SQLite has one) at most about half the time and requests'
// transactions get in between its batches.
func (a *App) yieldWriter(ctx context.Context, t0 time.Time) error {
	if a.retentionYield <= 0 {
		return nil
	}
	t := time.NewTimer(time.Duration(float64(time.Since(t0)) * a.retentionYield))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// redactOldEvents redacts (retention.RedactObject) the objects of events
// created before cut. Events are pruned after event.Retention (shorter
// than any identification period), so only an account's newest event,
// kept for numbering, can be that old: the oldest event of each stream is
// looked at.
func (a *App) redactOldEvents(ctx context.Context, cut time.Time) (int64, error) {
	streams, err := a.store.Read().EventStreams(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, st := range streams {
		env := account.Environment(st[1])
		seq, at, obj, ok, err := a.store.Read().OldestEvent(ctx, st[0], env)
		if err != nil {
			return n, err
		}
		if !ok || !at.Before(cut) {
			continue
		}
		red, changed := retention.RedactObject([]byte(obj))
		if !changed {
			continue
		}
		if err := a.store.Write(ctx, func(q store.Q) error { return q.SetEventObject(ctx, st[0], env, seq, string(red)) }); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// usable refuses a new document for a customer whose erasure was
// requested (restricted to the retention duty of its old documents).
func usable(op string, c invoicing.Customer) error {
	if c.ErasedAt == nil {
		return nil
	}
	return apperr.E(op, apperr.Conflict, CodeCustomerErased, fmt.Sprintf("customer %q is erased: no new documents (docs/privacy.md)", c.ID))
}

// Privacy subjects: the records a partner can export or erase.
const (
	SubjectCoupon       = "coupon"
	SubjectSubscription = "subscription"
	SubjectCustomer     = "customer"
)

type subjectJSON struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

type recordJSON struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// ExportJSON is GET /v1/privacy/{coupons|subscriptions|customers}/{id}.json:
// everything stored about the subject (docs/privacy.md, "Export").
type ExportJSON struct {
	Object        string               `json:"object"`
	Subject       subjectJSON          `json:"subject"`
	Environment   string               `json:"environment"`
	ExportedAt    timestamp            `json:"exported_at"`
	Coupons       []exportCoupon       `json:"coupons"`
	Tickets       []exportTicket       `json:"tickets"`
	Subscriptions []exportSubscription `json:"subscriptions"`
	Customers     []CustomerJSON       `json:"customers"`
	BillingRecord []exportBilling      `json:"billing_records"`
}

type exportCoupon struct {
	ID             string          `json:"id"`
	OrderID        string          `json:"order_id"`
	ProductID      string          `json:"product_id"`
	SubscriptionID *string         `json:"subscription_id"`
	TariffSettings json.RawMessage `json:"tariff_settings"`
	Activated      bool            `json:"activated"`
	CreatedAt      timestamp       `json:"created_at"`
}

type exportTicket struct {
	ID                   string          `json:"id"`
	CouponID             string          `json:"coupon_id"`
	IdentificationMedium json.RawMessage `json:"identification_medium"`
	TariffSettings       json.RawMessage `json:"tariff_settings"`
	ValidFrom            timestamp       `json:"valid_from"`
	ValidUntil           timestamp       `json:"valid_until"`
	CreatedAt            timestamp       `json:"created_at"`
	RevocationReason     *string         `json:"revocation_reason"`
	// IdentificationErased says the medium and tariff settings hold neutral
	// values; otherwise IdentificationErasedFrom is when the retention job
	// erases them.
	IdentificationErased     bool       `json:"identification_erased"`
	IdentificationErasedFrom *timestamp `json:"identification_erased_from"`
}

type exportSubscription struct {
	ID          string     `json:"id"`
	ProductID   string     `json:"product_id"`
	CreatedAt   timestamp  `json:"created_at"`
	CancelledAt *timestamp `json:"cancelled_at"`
	EndsAt      *timestamp `json:"ends_at"`
}

type exportBilling struct {
	Type     string    `json:"type"`
	ID       string    `json:"id"`
	Date     timestamp `json:"date"`
	KeptFor  string    `json:"kept_for"`
	KeptTill timestamp `json:"kept_until"`
}

// ErasureJSON is the answer of POST …/erasure.json: per retention class,
// what was erased at once and what is restricted until its duty ends.
type ErasureJSON struct {
	Object      string         `json:"object"`
	Subject     subjectJSON    `json:"subject"`
	Environment string         `json:"environment"`
	RequestedAt timestamp      `json:"requested_at"`
	Classes     []erasureClass `json:"classes"`
}

type erasureClass struct {
	Class retention.Class `json:"class"`
	// State is "erased" (gone now) or "restricted" (kept only for the
	// legal duty, no longer shown or used otherwise, erased at Until).
	State   string       `json:"state"`
	Until   *timestamp   `json:"until"`
	Records []recordJSON `json:"records"`
}

// subjectRecords are the stored records of one subject.
type subjectRecords struct {
	coupons []ticketing.Coupon
	tickets []ticketing.Ticket
	subs    []ticketing.Subscription
	cust    *invoicing.Customer
	billing []retention.RecordRef
	erased  *time.Time
	until   *time.Time // a customer's restriction
}

// subjectOf reads the subject of p: another account's or environment's
// record is the same NotFound as an unknown id.
func (a *App) subjectOf(ctx context.Context, q store.Q, p account.Principal, kind, id string) (subjectRecords, error) {
	var s subjectRecords
	var err error
	switch kind {
	case SubjectCoupon:
		c, err := q.Coupon(ctx, id)
		if err != nil {
			return s, err
		}
		if c.AccountID != p.AccountID || c.Environment != p.Environment {
			return s, apperr.NotFoundf("app.subjectOf", store.CodeCouponNotFound)
		}
		s.coupons = []ticketing.Coupon{c}
	case SubjectSubscription:
		sub, err := q.Subscription(ctx, p.AccountID, p.Environment, id)
		if err != nil {
			return s, err
		}
		s.subs = []ticketing.Subscription{sub}
		if s.coupons, err = q.CouponsOfSubscription(ctx, id); err != nil {
			return s, err
		}
	default:
		c, err := q.Customer(ctx, p.AccountID, p.Environment, id)
		if err != nil {
			return s, err
		}
		s.cust = &c
	}
	for _, c := range s.coupons {
		ts, err := q.TicketsOfCoupon(ctx, c.ID)
		if err != nil {
			return s, err
		}
		s.tickets = append(s.tickets, ts...)
	}
	if s.billing, err = q.BillingRecordsOf(ctx, kind, id); err != nil {
		return s, err
	}
	s.erased, s.until, err = q.ErasedAt(ctx, kind, id)
	return s, err
}

// alreadyErased is the answer to an export or erasure of a subject whose
// erasure was requested before.
func alreadyErased(op, kind string, s subjectRecords) error {
	msg := fmt.Sprintf("the %s's personal data was erased on request at %s", kind, s.erased.UTC().Format(time.RFC3339))
	if s.until != nil {
		msg += fmt.Sprintf("; what the retention duty needs is restricted until %s", s.until.UTC().Format(time.RFC3339))
	}
	return apperr.E(op, apperr.Conflict, CodeAlreadyErased, msg)
}

// billingUntil is when the duty of the newest billing record ends (nil
// without any).
func (a *App) billingUntil(refs []retention.RecordRef) *time.Time {
	var until *time.Time
	for _, r := range refs {
		u := a.retention.BillingUntil(r.At, a.Loc)
		if until == nil || u.After(*until) {
			until = &u
		}
	}
	return until
}

// ExportPersonalData is everything stored about a coupon, subscription or
// customer of the caller's account and environment.
func (a *App) ExportPersonalData(ctx context.Context, p account.Principal, kind, id string) (ExportJSON, error) {
	const op = "app.ExportPersonalData"
	q := a.store.Read()
	s, err := a.subjectOf(ctx, q, p, kind, id)
	if err != nil {
		return ExportJSON{}, err
	}
	if s.erased != nil {
		return ExportJSON{}, alreadyErased(op, kind, s)
	}
	out := ExportJSON{Object: "personal_data_export", Subject: subjectJSON{kind, id}, Environment: string(p.Environment),
		ExportedAt: timestamp(a.clock.Now()), Coupons: []exportCoupon{}, Tickets: []exportTicket{},
		Subscriptions: []exportSubscription{}, Customers: []CustomerJSON{}, BillingRecord: []exportBilling{}}
	for _, c := range s.coupons {
		out.Coupons = append(out.Coupons, exportCoupon{ID: c.ID, OrderID: c.OrderID, ProductID: c.ProductID, SubscriptionID: c.SubscriptionID,
			TariffSettings: rawOrNull(c.TariffSettings), Activated: c.Activated, CreatedAt: timestamp(c.CreatedAt)})
	}
	for _, t := range s.tickets {
		et := exportTicket{ID: t.ID, CouponID: t.CouponID, IdentificationMedium: rawOrNull(t.IdentificationMedium),
			TariffSettings: rawOrNull(t.TariffSettings), ValidFrom: timestamp(t.ValidFrom), ValidUntil: timestamp(t.ValidUntil),
			CreatedAt: timestamp(t.CreatedAt), RevocationReason: t.RevokedReason, IdentificationErased: t.MediumHash == store.ErasedMediumHash}
		if !et.IdentificationErased {
			et.IdentificationErasedFrom = tsPtr(ptr(t.ValidUntil.Add(a.retention.Identification)))
		}
		out.Tickets = append(out.Tickets, et)
	}
	for _, sub := range s.subs {
		out.Subscriptions = append(out.Subscriptions, exportSubscription{ID: sub.ID, ProductID: sub.ProductID, CreatedAt: timestamp(sub.CreatedAt),
			CancelledAt: tsPtr(sub.CancelRequestedAt), EndsAt: tsPtr(sub.EndsAt)})
	}
	if s.cust != nil {
		out.Customers = append(out.Customers, customerView(*s.cust))
	}
	for _, r := range s.billing {
		out.BillingRecord = append(out.BillingRecord, exportBilling{Type: r.Type, ID: r.ID, Date: timestamp(r.At),
			KeptFor: string(retention.BillingRecords), KeptTill: timestamp(a.retention.BillingUntil(r.At, a.Loc))})
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }

func rawOrNull(j json.RawMessage) json.RawMessage {
	if len(j) == 0 {
		return json.RawMessage("null")
	}
	return j
}

// ErasePersonalData erases what no retention duty covers at once and
// restricts the rest (docs/privacy.md, "Erasure"): the identification
// data of the subject's tickets (still valid tickets are revoked: nobody
// can show them any more) and its coupons' tariff settings, a customer's
// recipient data when no invoice was issued to it; the billing records
// (and the recipient data of a customer with invoices) are kept until the
// duty ends. Events about the subject are redacted and a
// <subject>.erased event, carrying this answer, is written.
func (a *App) ErasePersonalData(ctx context.Context, p account.Principal, kind, id string) (ErasureJSON, error) {
	const op = "app.ErasePersonalData"
	now := a.clock.Now()
	out := ErasureJSON{Object: "personal_data_erasure", Subject: subjectJSON{kind, id}, Environment: string(p.Environment),
		RequestedAt: timestamp(now), Classes: []erasureClass{}}
	err := a.store.WriteClaimed(ctx, idempotency.ClaimOf(ctx), func(q store.Q) error {
		switch kind {
		case SubjectCoupon:
			if err := q.LockCoupon(ctx, id); err != nil {
				return err
			}
		case SubjectSubscription:
			if err := q.LockSubscription(ctx, id); err != nil {
				return err
			}
		}
		s, err := a.subjectOf(ctx, q, p, kind, id)
		if err != nil {
			return err
		}
		if s.erased != nil {
			return alreadyErased(op, kind, s)
		}
		out.Classes = out.Classes[:0]
		until := a.billingUntil(s.billing)
		objects := []string{id}
		if kind != SubjectCustomer {
			recs := []recordJSON{}
			for _, t := range s.tickets {
				if t.InvalidatedAt == nil && t.ValidUntil.After(now) {
					if err := a.revoke(ctx, q, t, ticketing.RevocationErased, "personal data erased on request", now); err != nil {
						return err
					}
				}
				recs = append(recs, recordJSON{"ticket", t.ID})
				objects = append(objects, t.ID)
			}
			if err := q.EraseTicketData(ctx, s.tickets); err != nil {
				return err
			}
			for _, c := range s.coupons {
				if err := q.EraseCouponSettings(ctx, c.ID, now); err != nil {
					return err
				}
				recs = append(recs, recordJSON{"coupon", c.ID})
				objects = append(objects, c.ID)
			}
			for _, sub := range s.subs {
				if err := q.MarkSubscriptionErased(ctx, sub.ID, now); err != nil {
					return err
				}
			}
			out.Classes = append(out.Classes, erasureClass{Class: retention.Identification, State: "erased", Records: recs})
		} else {
			cust := []recordJSON{{"customer", id}}
			if hasInvoice(s.billing) {
				if err := q.RestrictCustomer(ctx, id, now, *until); err != nil {
					return err
				}
				out.Classes = append(out.Classes, erasureClass{Class: retention.BillingRecords, State: "restricted", Until: tsPtr(until), Records: cust})
			} else {
				if err := q.EraseCustomer(ctx, id, now); err != nil {
					return err
				}
				out.Classes = append(out.Classes, erasureClass{Class: retention.BillingRecords, State: "erased", Records: cust})
			}
		}
		if len(s.billing) > 0 {
			recs := []recordJSON{}
			for _, r := range s.billing {
				recs = append(recs, recordJSON{r.Type, r.ID})
			}
			out.Classes = append(out.Classes, erasureClass{Class: retention.BillingRecords, State: "restricted", Until: tsPtr(until), Records: recs})
		}
		if err := a.redactEvents(ctx, q, p, objects); err != nil {
			return err
		}
		if err := eraseStoredAnswers(ctx, q, p, objects); err != nil {
			return err
		}
		ev := a.events(p.AccountID, p.Environment)
		t := map[string]event.Type{SubjectCoupon: event.CouponErased, SubjectSubscription: event.SubscriptionErased, SubjectCustomer: event.CustomerErased}[kind]
		if err := ev.add(t, id, out); err != nil {
			return err
		}
		return ev.write(ctx, q)
	})
	return out, err
}

func hasInvoice(refs []retention.RecordRef) bool {
	for _, r := range refs {
		if r.Type == "invoice" {
			return true
		}
	}
	return false
}

// eraseStoredAnswers removes the stored Idempotency-Key answers that name
// one of the erased records (ids) and hold personal data: a keyless
// activation's answer (the ticket with the medium, its barcode, the postal
// code), the answer of a customer's creation. A retry with such a key is
// refused as carried out (store.EraseAnswer), never answered from the
// store again.
func eraseStoredAnswers(ctx context.Context, q store.Q, p account.Principal, ids []string) error {
	answers, err := q.AnswersNaming(ctx, IdempotencyScope(p), ids)
	if err != nil {
		return err
	}
	for _, an := range answers {
		if !holdsPersonalData(an.Body) {
			continue
		}
		if err := q.EraseAnswer(ctx, an.Scope, an.Key); err != nil {
			return err
		}
	}
	return nil
}

// holdsPersonalData reports whether a stored JSON answer holds data of
// docs/privacy.md's list: an identification medium or tariff settings
// that are not erased yet (retention.RedactObject would change them), or
// a customer's recipient data (address lines, electronic invoicing).
func holdsPersonalData(body []byte) bool {
	if _, changed := retention.RedactObject(body); changed {
		return true
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				if (k == "address_lines" || k == "electronic_invoicing") && x != nil {
					return true
				}
				if walk(x) {
					return true
				}
			}
		case []any:
			for _, x := range t {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// redactEvents redacts the stored objects of the caller's events about
// the given objects (ticket.issued carries the medium, coupon events the
// tariff settings).
func (a *App) redactEvents(ctx context.Context, q store.Q, p account.Principal, ids []string) error {
	evs, err := q.EventsOfObjects(ctx, p.AccountID, p.Environment, ids)
	if err != nil {
		return err
	}
	for seq, obj := range evs {
		if red, changed := retention.RedactObject([]byte(obj)); changed {
			if err := q.SetEventObject(ctx, p.AccountID, p.Environment, seq, string(red)); err != nil {
				return err
			}
		}
	}
	return nil
}

// RetentionInterval is how often the retention job runs (by one instance).
const RetentionInterval = 24 * time.Hour

// DailyRetention runs the retention job when no instance ran it in the
// last RetentionInterval; ran is false when it was not due here.
func (a *App) DailyRetention(ctx context.Context) (r RetentionReport, ran bool, err error) {
	now := a.clock.Now()
	err = a.store.Write(ctx, func(q store.Q) error {
		var err error
		ran, err = q.ClaimRetentionRun(ctx, now, RetentionInterval)
		return err
	})
	if err != nil || !ran {
		return r, false, err
	}
	r, err = a.RunRetention(ctx, false)
	if err != nil {
		return r, true, err
	}
	return r, true, a.store.Write(ctx, func(q store.Q) error { return q.FinishRetentionRun(ctx, a.clock.Now()) })
}
