package privacy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/customers"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/retention"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

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
func subjectOf(ctx context.Context, q Queries, p account.Principal, kind, id string) (subjectRecords, error) {
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

// ExportJSON is GET /v1/privacy/{coupons|subscriptions|customers}/{id}.json:
// everything stored about the subject (docs/privacy.md, "Export").
type ExportJSON struct {
	Object        string                   `json:"object"`
	Subject       subjectJSON              `json:"subject"`
	Environment   string                   `json:"environment"`
	ExportedAt    kit.Timestamp            `json:"exported_at"`
	Coupons       []exportCoupon           `json:"coupons"`
	Tickets       []exportTicket           `json:"tickets"`
	Subscriptions []exportSubscription     `json:"subscriptions"`
	Customers     []customers.CustomerJSON `json:"customers"`
	BillingRecord []exportBilling          `json:"billing_records"`
}

type exportCoupon struct {
	ID             string          `json:"id"`
	OrderID        string          `json:"order_id"`
	ProductID      string          `json:"product_id"`
	SubscriptionID *string         `json:"subscription_id"`
	TariffSettings json.RawMessage `json:"tariff_settings"`
	Activated      bool            `json:"activated"`
	CreatedAt      kit.Timestamp   `json:"created_at"`
}

type exportTicket struct {
	ID                   string          `json:"id"`
	CouponID             string          `json:"coupon_id"`
	IdentificationMedium json.RawMessage `json:"identification_medium"`
	TariffSettings       json.RawMessage `json:"tariff_settings"`
	ValidFrom            kit.Timestamp   `json:"valid_from"`
	ValidUntil           kit.Timestamp   `json:"valid_until"`
	CreatedAt            kit.Timestamp   `json:"created_at"`
	RevocationReason     *string         `json:"revocation_reason"`
	// IdentificationErased says the medium and tariff settings hold neutral
	// values; otherwise IdentificationErasedFrom is when the retention job
	// erases them.
	IdentificationErased     bool           `json:"identification_erased"`
	IdentificationErasedFrom *kit.Timestamp `json:"identification_erased_from"`
}

type exportSubscription struct {
	ID          string         `json:"id"`
	ProductID   string         `json:"product_id"`
	CreatedAt   kit.Timestamp  `json:"created_at"`
	CancelledAt *kit.Timestamp `json:"cancelled_at"`
	EndsAt      *kit.Timestamp `json:"ends_at"`
}

type exportBilling struct {
	Type     string        `json:"type"`
	ID       string        `json:"id"`
	Date     kit.Timestamp `json:"date"`
	KeptFor  string        `json:"kept_for"`
	KeptTill kit.Timestamp `json:"kept_until"`
}

// Export is everything stored about a coupon, subscription or customer of
// the caller's account and environment.
func (s *Service) Export(ctx context.Context, p account.Principal, kind, id string) (ExportJSON, error) {
	const op = "app.ExportPersonalData"
	sr, err := subjectOf(ctx, s.DB.Read(), p, kind, id)
	if err != nil {
		return ExportJSON{}, err
	}
	if sr.erased != nil {
		return ExportJSON{}, alreadyErased(op, kind, sr)
	}
	out := ExportJSON{Object: "personal_data_export", Subject: subjectJSON{kind, id}, Environment: string(p.Environment),
		ExportedAt: kit.Timestamp(s.Clock.Now()), Coupons: []exportCoupon{}, Tickets: []exportTicket{},
		Subscriptions: []exportSubscription{}, Customers: []customers.CustomerJSON{}, BillingRecord: []exportBilling{}}
	for _, c := range sr.coupons {
		out.Coupons = append(out.Coupons, exportCoupon{ID: c.ID, OrderID: c.OrderID, ProductID: c.ProductID, SubscriptionID: c.SubscriptionID,
			TariffSettings: rawOrNull(c.TariffSettings), Activated: c.Activated, CreatedAt: kit.Timestamp(c.CreatedAt)})
	}
	for _, t := range sr.tickets {
		et := exportTicket{ID: t.ID, CouponID: t.CouponID, IdentificationMedium: rawOrNull(t.IdentificationMedium),
			TariffSettings: rawOrNull(t.TariffSettings), ValidFrom: kit.Timestamp(t.ValidFrom), ValidUntil: kit.Timestamp(t.ValidUntil),
			CreatedAt: kit.Timestamp(t.CreatedAt), RevocationReason: t.RevokedReason, IdentificationErased: t.MediumHash == store.ErasedMediumHash}
		if !et.IdentificationErased {
			from := t.ValidUntil.Add(s.policy.Identification)
			et.IdentificationErasedFrom = kit.TimestampPtr(&from)
		}
		out.Tickets = append(out.Tickets, et)
	}
	for _, sub := range sr.subs {
		out.Subscriptions = append(out.Subscriptions, exportSubscription{ID: sub.ID, ProductID: sub.ProductID, CreatedAt: kit.Timestamp(sub.CreatedAt),
			CancelledAt: kit.TimestampPtr(sub.CancelRequestedAt), EndsAt: kit.TimestampPtr(sub.EndsAt)})
	}
	if sr.cust != nil {
		out.Customers = append(out.Customers, customers.View(*sr.cust))
	}
	for _, r := range sr.billing {
		out.BillingRecord = append(out.BillingRecord, exportBilling{Type: r.Type, ID: r.ID, Date: kit.Timestamp(r.At),
			KeptFor: string(retention.BillingRecords), KeptTill: kit.Timestamp(s.policy.BillingUntil(r.At, s.loc))})
	}
	return out, nil
}

func rawOrNull(j json.RawMessage) json.RawMessage {
	if len(j) == 0 {
		return json.RawMessage("null")
	}
	return j
}
