package privacy

import (
	"context"
	"encoding/json"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/retention"
	"github.com/farebox/farebox/internal/ticketing"
)

// ErasureJSON is the answer of POST …/erasure.json: per retention class,
// what was erased at once and what is restricted until its duty ends.
type ErasureJSON struct {
	Object      string         `json:"object"`
	Subject     subjectJSON    `json:"subject"`
	Environment string         `json:"environment"`
	RequestedAt kit.Timestamp  `json:"requested_at"`
	Classes     []erasureClass `json:"classes"`
}

type erasureClass struct {
	Class retention.Class `json:"class"`
	// State is "erased" (gone now) or "restricted" (kept only for the
	// legal duty, no longer shown or used otherwise, erased at Until).
	State   string         `json:"state"`
	Until   *kit.Timestamp `json:"until"`
	Records []recordJSON   `json:"records"`
}

// erasedEvent is the event an erasure of each kind of subject writes.
var erasedEvent = map[string]event.Type{SubjectCoupon: event.CouponErased, SubjectSubscription: event.SubscriptionErased, SubjectCustomer: event.CustomerErased}

// Erase erases what no retention duty covers at once and restricts the
// rest (docs/privacy.md, "Erasure"): the identification data of the
// subject's tickets (still valid tickets are revoked: nobody can show them
// any more) and its coupons' tariff settings, a customer's recipient data
// when no invoice was issued to it; the billing records (and the
// recipient data of a customer with invoices) are kept until the duty
// ends. Events about the subject are redacted, the stored answers naming
// it that hold personal data are removed, and a <subject>.erased event,
// carrying this answer, is written.
func (s *Service) Erase(ctx context.Context, claim idempotency.Claim, p account.Principal, kind, id string) (ErasureJSON, error) {
	const op = "app.ErasePersonalData"
	now := s.Clock.Now()
	out := ErasureJSON{Object: "personal_data_erasure", Subject: subjectJSON{kind, id}, Environment: string(p.Environment),
		RequestedAt: kit.Timestamp(now), Classes: []erasureClass{}}
	err := s.tx(ctx, claim, func(q Queries, w Work) error {
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
		sr, err := subjectOf(ctx, q, p, kind, id)
		if err != nil {
			return err
		}
		if sr.erased != nil {
			return alreadyErased(op, kind, sr)
		}
		until := s.billingUntil(sr.billing)
		objects := []string{id}
		var class erasureClass
		if kind != SubjectCustomer {
			class, objects, err = eraseTicketing(ctx, q, w, sr, objects, now)
		} else {
			class, err = eraseCustomer(ctx, q, sr, id, until, now)
		}
		if err != nil {
			return err
		}
		out.Classes = append(out.Classes[:0], class)
		if len(sr.billing) > 0 {
			recs := []recordJSON{}
			for _, r := range sr.billing {
				recs = append(recs, recordJSON{r.Type, r.ID})
			}
			out.Classes = append(out.Classes, erasureClass{Class: retention.BillingRecords, State: "restricted", Until: kit.TimestampPtr(until), Records: recs})
		}
		if err := redactEvents(ctx, q, p, objects); err != nil {
			return err
		}
		if err := eraseStoredAnswers(ctx, q, p, objects); err != nil {
			return err
		}
		return w.WriteEvent(ctx, p, erasedEvent[kind], id, out)
	})
	return out, err
}

// eraseTicketing erases the identification data of a coupon's or
// subscription's tickets (revoking the still valid ones) and its coupons'
// tariff settings, and marks its subscription erased; objects gains the
// erased tickets and coupons.
func eraseTicketing(ctx context.Context, q Queries, w Work, sr subjectRecords, objects []string, now time.Time) (erasureClass, []string, error) {
	recs := []recordJSON{}
	for _, t := range sr.tickets {
		if t.InvalidatedAt == nil && t.ValidUntil.After(now) {
			if err := w.Revoke(ctx, t, ticketing.RevocationErased, "personal data erased on request", now); err != nil {
				return erasureClass{}, objects, err
			}
		}
		recs = append(recs, recordJSON{"ticket", t.ID})
		objects = append(objects, t.ID)
	}
	if err := q.EraseTicketData(ctx, sr.tickets); err != nil {
		return erasureClass{}, objects, err
	}
	for _, c := range sr.coupons {
		if err := q.EraseCouponSettings(ctx, c.ID, now); err != nil {
			return erasureClass{}, objects, err
		}
		recs = append(recs, recordJSON{"coupon", c.ID})
		objects = append(objects, c.ID)
	}
	for _, sub := range sr.subs {
		if err := q.MarkSubscriptionErased(ctx, sub.ID, now); err != nil {
			return erasureClass{}, objects, err
		}
	}
	return erasureClass{Class: retention.Identification, State: "erased", Records: recs}, objects, nil
}

// eraseCustomer erases customer id's recipient data, or, when an invoice
// was issued to it, restricts it until the duty of the newest billing
// record ends (until).
func eraseCustomer(ctx context.Context, q Queries, sr subjectRecords, id string, until *time.Time, now time.Time) (erasureClass, error) {
	cust := []recordJSON{{"customer", id}}
	if hasInvoice(sr.billing) {
		if err := q.RestrictCustomer(ctx, id, now, *until); err != nil {
			return erasureClass{}, err
		}
		return erasureClass{Class: retention.BillingRecords, State: "restricted", Until: kit.TimestampPtr(until), Records: cust}, nil
	}
	if err := q.EraseCustomer(ctx, id, now); err != nil {
		return erasureClass{}, err
	}
	return erasureClass{Class: retention.BillingRecords, State: "erased", Records: cust}, nil
}

// billingUntil is when the duty of the newest billing record ends (nil
// without any).
func (s *Service) billingUntil(refs []retention.RecordRef) *time.Time {
	var until *time.Time
	for _, r := range refs {
		u := s.policy.BillingUntil(r.At, s.loc)
		if until == nil || u.After(*until) {
			until = &u
		}
	}
	return until
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
func eraseStoredAnswers(ctx context.Context, q Queries, p account.Principal, ids []string) error {
	answers, err := q.AnswersNaming(ctx, idempotency.Scope(p), ids)
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
func redactEvents(ctx context.Context, q Queries, p account.Principal, ids []string) error {
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
