package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/idempotency"
	"maps"
	"slices"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/schema"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/subscription"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/farebox/farebox/internal/validity"
)

// ActivationRequest is the body of POST …/coupons/{id}/activate.json in all
// the shapes the SDKs send (client-contract.md 2.2). Raw fields are nil when
// absent.
type ActivationRequest struct {
	IdentificationMedium json.RawMessage
	ActivationStart      string
	TariffSettings       json.RawMessage
	ReactivationKey      string
	// Version is the API version of the path (v8 enforces the 72-hour
	// window; v9 returns the same ticket for any repeat of a reactivation key,
	// earlier versions only for a repeat with the same medium).
	Version int
}

// Activation is the outcome of an activation.
type Activation struct {
	TicketID  string
	AccountID string
	Coupon    ticketing.Coupon
}

// CouponID is the activated coupon's id.
func (a Activation) CouponID() string { return a.Coupon.ID }

// Environment is the environment of the activated coupon (live or test),
// the label of the transport's activation metrics.
func (a Activation) Environment() string { return string(a.Coupon.Environment) }

// ActivateCoupon turns a coupon into a ticket, or a subscription coupon's
// next ordered cycle into a ticket (reactivation). It is idempotent: the
// same medium activating the same coupon again yields the same ticket id;
// a different medium is a 409. Concurrent activations of one coupon create
// exactly one ticket (a unique index; the loser re-reads the winner's).
func (a *App) ActivateCoupon(ctx context.Context, claim idempotency.Claim, couponID string, req ActivationRequest) (Activation, error) {
	var out Activation
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		out, err = a.activateOnce(ctx, claim, couponID, req)
		if apperr.KindOf(err) != apperr.Conflict || apperr.As(err).Code != CodeConflict {
			return out, err
		}
		// Lost a race on the unique ticket index: the second pass finds the winner's ticket.
	}
	return out, err
}

func (a *App) activateOnce(ctx context.Context, claim idempotency.Claim, couponID string, req ActivationRequest) (Activation, error) {
	const op = "app.ActivateCoupon"
	var out Activation
	err := a.store.WriteClaimed(ctx, claim, func(q store.Q) error {
		c, err := q.LockedCoupon(ctx, couponID)
		if err != nil {
			return err
		}
		out.Coupon, out.AccountID = c, c.AccountID
		now, err := a.timeOf(ctx, q, c.TestClockID)
		if err != nil {
			return err
		}
		pr, ok := a.Catalog().Product(c.ProductID)
		if !ok {
			return apperr.E(op, apperr.Internal, CodeProductMissing, "the coupon's product is not in the catalog")
		}
		if c.RestoredCouponID != nil {
			return apperr.E(op, apperr.Unprocessable, CodeCouponRestored,
				validity.MsgAnymore+": the coupon was restored into a new coupon")
		}
		before, err := q.TicketsOfCoupon(ctx, c.ID)
		if err != nil {
			return err
		}
		if req.ReactivationKey != "" {
			out.TicketID, err = a.reactivate(ctx, q, c, req, before, now)
		} else {
			out.TicketID, err = a.activateFirst(ctx, q, c, pr, req, before, now)
		}
		if err != nil {
			return err
		}
		for _, t := range before {
			if t.ID == out.TicketID {
				return nil // the same ticket again (idempotent repeat): nothing changed
			}
		}
		return a.activationEvents(ctx, q, c, out.TicketID, req.ReactivationKey != "", now)
	})
	if err == nil && req.ReactivationKey != "" {
		a.notifyJobs() // a cycle that has already started updates its pass now
	}
	return out, err
}

// activationEvents writes the events of a new ticket: ticket.issued, and
// coupon.activated for a first activation (also of a restored coupon) or
// subscription.reactivated for a reactivation.
func (a *App) activationEvents(ctx context.Context, q store.Q, c ticketing.Coupon, ticketID string, reactivation bool, now time.Time) error {
	ev := a.eventsAt(c.AccountID, c.Environment, now)
	if reactivation {
		if err := ev.subscription(ctx, q, event.SubscriptionReactivated, *c.SubscriptionID); err != nil {
			return err
		}
	} else if err := ev.coupon(ctx, q, event.CouponActivated, c.ID); err != nil {
		return err
	}
	if err := ev.ticket(ctx, q, ticketID); err != nil {
		return err
	}
	return ev.write(ctx, q)
}

// mediumHash identifies an identification medium regardless of key order.
func mediumHash(raw json.RawMessage) string {
	var v any
	_ = json.Unmarshal(raw, &v)
	canon, _ := json.Marshal(v) // map keys are sorted
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// validInput checks the medium and tariff settings against the product.
// Absent tariff settings fall back to those stored on the coupon.
func (a *App) validInput(pr *catalog.Product, medium, tariff, couponTariff json.RawMessage) (json.RawMessage, error) {
	const op = "app.validInput"
	ims, err := a.schemas.Get(pr.IdentificationMediumSchema)
	if err != nil {
		return nil, apperr.Wrap(op, err)
	}
	if err := schema.IdentificationMedium.Check(op, ims, medium); err != nil {
		return nil, err
	}
	if err := checkNameLengths(op, medium); err != nil {
		return nil, err
	}
	if isAbsent(tariff) {
		tariff = couponTariff
	}
	if !pr.HasTariffSettings() {
		// The identification view sends {"tariff_settings":{}} when the product has no schema.
		if !isAbsent(tariff) && !isEmptyObject(tariff) {
			return nil, schema.TariffSettings.Error(op, []schema.Problem{{Message: "this product takes no tariff settings"}})
		}
		return nil, nil
	}
	tss, err := a.schemas.Get(pr.TariffSettingsSchema)
	if err != nil {
		return nil, apperr.Wrap(op, err)
	}
	if err := schema.TariffSettings.Check(op, tss, tariff); err != nil {
		return nil, err
	}
	return tariff, nil
}

// checkNameLengths refuses a passenger name the inspection barcode cannot
// carry whole (more than barcode.MaxTextBytes of UTF-8; the catalog's
// 100-character limit is at most 400 bytes), naming the field, instead of
// cutting it on passes and in the barcode later.
func checkNameLengths(op string, medium json.RawMessage) error {
	var m map[string]map[string]any
	if json.Unmarshal(medium, &m) != nil {
		return nil // the schema check has judged the shape
	}
	var problems []schema.Problem
	for _, option := range slices.Sorted(maps.Keys(m)) {
		for _, field := range []string{"first_name", "last_name"} {
			if s, ok := m[option][field].(string); ok && len(s) > barcode.MaxTextBytes {
				problems = append(problems, schema.Problem{Pointer: "/" + option + "/" + field,
					Message: fmt.Sprintf("is %d bytes long; at most %d bytes (UTF-8) fit the ticket's inspection barcode", len(s), barcode.MaxTextBytes)})
			}
		}
	}
	return schema.IdentificationMedium.Error(op, problems)
}

func isAbsent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

func isEmptyObject(raw json.RawMessage) bool {
	var m map[string]any
	return json.Unmarshal(raw, &m) == nil && len(m) == 0
}

// activateFirst activates coupon c, whose tickets (read under its row
// lock) are existing.
func (a *App) activateFirst(ctx context.Context, q store.Q, c ticketing.Coupon, pr *catalog.Product, req ActivationRequest,
	existing []ticketing.Ticket, now time.Time) (string, error) {
	const op = "app.activateFirst"
	if c.OriginalCouponID != nil {
		return a.activateRestored(ctx, q, c, existing, now)
	}
	if isAbsent(req.IdentificationMedium) {
		return "", schema.IdentificationMedium.Error(op, []schema.Problem{{Message: "is required"}})
	}
	tariff, err := a.validInput(pr, req.IdentificationMedium, req.TariffSettings, c.TariffSettings)
	if err != nil {
		return "", err
	}
	hash := mediumHash(req.IdentificationMedium)
	if c.Activated && len(existing) > 0 {
		first := existing[0]
		if first.MediumHash == hash {
			return first.ID, nil
		}
		return "", apperr.E(op, apperr.Conflict, CodeCouponAlreadyActivated,
			"The coupon is already activated with another identification medium")
	}
	def, err := validity.FromProduct(pr.DurationDefinition, pr.DurationInMinutes, pr.ValidityInMinutes, pr.TicketType)
	if err != nil {
		return "", apperr.Wrap(op, err)
	}
	win := validity.Activation(def, c.CreatedAt, a.Loc)
	if err := win.Check(now, req.Version >= 8); err != nil {
		return "", err
	}
	requested, err := validity.ParseStart(req.ActivationStart)
	if err != nil {
		return "", err
	}
	_, from, until, err := win.Start(def, requested, now, a.Loc)
	if err != nil {
		return "", err
	}
	t := ticketing.Ticket{ID: a.IDs.New("ticket"), CouponID: c.ID, AccountID: c.AccountID, Environment: c.Environment,
		ProductID: pr.ID, IdentificationMedium: req.IdentificationMedium, MediumHash: hash, TariffSettings: tariff,
		ValidFrom: from, ValidUntil: until, CreatedAt: now}
	if c.SubscriptionID != nil {
		s, err := q.Subscription(ctx, "", "", *c.SubscriptionID)
		if err != nil {
			return "", err
		}
		st, err := subscription.ActivateFirst(subState(s), from, a.IDs.New("cycle"), a.Loc)
		if err != nil {
			return "", err
		}
		first := st.Cycles[0]
		t.CycleID, t.ValidFrom, t.ValidUntil = first.ID, first.ValidFrom, first.ValidUntil
		key := a.IDs.New("reactivation-key")
		t.ReactivationKey = &key
		if err := applyState(ctx, q, s, st, now, s.Cycles[0].ID, t.ID); err != nil {
			return "", err
		}
	}
	if err := a.insertTicket(ctx, q, t); err != nil {
		return "", err
	}
	if tariff != nil && !bytes.Equal(tariff, c.TariffSettings) {
		if err := q.SetCouponTariffSettings(ctx, c.ID, tariff); err != nil {
			return "", err
		}
	}
	return t.ID, q.MarkCouponActivated(ctx, c.ID)
}

// activateRestored activates a restored coupon with an empty body: the new
// ticket keeps the original ticket's validity, identification and cycle.
func (a *App) activateRestored(ctx context.Context, q store.Q, c ticketing.Coupon, existing []ticketing.Ticket, now time.Time) (string, error) {
	if len(existing) > 0 {
		return existing[len(existing)-1].ID, nil
	}
	old, err := q.TicketsOfCoupon(ctx, *c.OriginalCouponID)
	if err != nil {
		return "", err
	}
	if len(old) == 0 {
		return "", apperr.E("app.activateRestored", apperr.Unprocessable, CodeOriginalNotActivated,
			"The original coupon was never activated; nothing to restore")
	}
	src := old[len(old)-1]
	t := ticketing.Ticket{ID: a.IDs.New("ticket"), CouponID: c.ID, AccountID: c.AccountID, Environment: c.Environment,
		ProductID: src.ProductID, IdentificationMedium: src.IdentificationMedium, MediumHash: src.MediumHash,
		TariffSettings: src.TariffSettings, ValidFrom: src.ValidFrom, ValidUntil: src.ValidUntil, CreatedAt: now}
	if c.SubscriptionID != nil {
		s, err := q.Subscription(ctx, "", "", *c.SubscriptionID)
		if err != nil {
			return "", err
		}
		for i, cy := range s.Cycles {
			if cy.ValidFrom.Equal(src.ValidFrom) {
				t.CycleID = cy.ID
				s.Cycles[i].TicketID = &t.ID
				if err := q.UpdateCycle(ctx, s.Cycles[i]); err != nil {
					return "", err
				}
			}
		}
		key := a.IDs.New("reactivation-key")
		t.ReactivationKey = &key
	}
	if err := a.insertTicket(ctx, q, t); err != nil {
		return "", err
	}
	return t.ID, q.MarkCouponActivated(ctx, c.ID)
}

// sameReactivationMedium reports whether a repeated reactivation names the
// medium the ticket it produced carries: the request's medium, or, when the
// request has none, the medium of the ticket that held the key (holder,
// what the first reactivation fell back to).
func sameReactivationMedium(req ActivationRequest, holder *ticketing.Ticket, produced ticketing.Ticket) bool {
	medium := req.IdentificationMedium
	if isAbsent(medium) {
		if holder == nil {
			return false
		}
		medium = holder.IdentificationMedium
	}
	return mediumHash(medium) == produced.MediumHash
}

// keyTickets finds, among a coupon's tickets, the one issued for key (a
// repeated reactivation) and the one carrying key for the next cycle. A
// key is issued on one coupon's ticket and used only by a reactivation of
// that coupon, so a key whose tickets are not among them is not this
// coupon's (the tickets were read under the coupon's row lock: one query
// instead of a lookup by each key column).
func keyTickets(tickets []ticketing.Ticket, key string) (used, holder *ticketing.Ticket) {
	for i := range tickets {
		t := &tickets[i]
		if t.UsedReactivationKey != nil && *t.UsedReactivationKey == key {
			used = t
		}
		if t.ReactivationKey != nil && *t.ReactivationKey == key {
			holder = t
		}
	}
	return used, holder
}

// reactivate issues the ticket of the subscription's next ordered cycle for
// the reactivation key carried by the previous ticket; tickets are the
// coupon's, read under its row lock.
func (a *App) reactivate(ctx context.Context, q store.Q, c ticketing.Coupon, req ActivationRequest, tickets []ticketing.Ticket, now time.Time) (string, error) {
	const op = "app.reactivate"
	badKey := apperr.Validation(op, CodeInvalidReactivationKey, "/reactivation_key",
		"reactivation_key: unknown, stale or not issued for this coupon")
	if c.SubscriptionID == nil {
		return "", badKey
	}
	used, prev := keyTickets(tickets, req.ReactivationKey)
	if used != nil {
		// v9 shares one subscription between apps: any repeat answers the
		// same ticket. Before v9 a repeat is still the same request when it
		// carries the same medium (an Android client whose 201 was lost
		// retries verbatim), so it answers the same ticket too; another
		// medium with a used key stays refused.
		if req.Version >= 9 || sameReactivationMedium(req, prev, *used) {
			return used.ID, nil
		}
		return "", apperr.E(op, apperr.Conflict, CodeReactivationKeyUsed,
			"This reactivation_key was already used with another identification_medium; use the coupon_reactivation_key of the newest ticket")
	}
	if prev == nil || prev.InvalidatedAt != nil {
		return "", badKey
	}
	if err := q.LockSubscription(ctx, *c.SubscriptionID); err != nil {
		return "", err
	}
	s, err := q.Subscription(ctx, "", "", *c.SubscriptionID)
	if err != nil {
		return "", err
	}
	st := subState(s)
	i, err := subscription.ReactivationTarget(st, now)
	if err != nil {
		return "", err
	}
	cycle := st.Cycles[i]
	pr, ok := a.Catalog().Product(cycle.ProductID)
	if !ok {
		return "", apperr.E(op, apperr.Internal, CodeProductMissing, "the cycle's product is not in the catalog")
	}
	medium := req.IdentificationMedium
	if isAbsent(medium) && prev.MediumHash != store.ErasedMediumHash {
		// An erased medium (docs/privacy.md) is not carried on: the
		// reactivation must name the passenger again.
		medium = prev.IdentificationMedium
	}
	tariff := req.TariffSettings
	if isAbsent(tariff) {
		tariff = prev.TariffSettings
	}
	tariff, err = a.validInput(pr, medium, tariff, c.TariffSettings)
	if err != nil {
		return "", err
	}
	key := a.IDs.New("reactivation-key")
	usedKey := req.ReactivationKey
	t := ticketing.Ticket{ID: a.IDs.New("ticket"), CouponID: c.ID, AccountID: c.AccountID, Environment: c.Environment,
		ProductID: pr.ID, CycleID: cycle.ID, IdentificationMedium: medium, MediumHash: mediumHash(medium), TariffSettings: tariff,
		ValidFrom: cycle.ValidFrom, ValidUntil: cycle.ValidUntil, ReactivationKey: &key, UsedReactivationKey: &usedKey, CreatedAt: now}
	next := subscription.Reactivate(st, i, a.IDs.New("cycle"), a.Loc)
	if err := applyState(ctx, q, s, next, now, cycle.ID, t.ID); err != nil {
		return "", err
	}
	if err := a.insertTicket(ctx, q, t); err != nil {
		return "", err
	}
	// The coupon's pass moves to the new cycle when it starts (00:00 on
	// the 1st): its update is due then, pushed by the job, not at midnight
	// by the phone. On a test clock advancing the clock past the start
	// does it (advanceJob).
	if c.TestClockID != nil && t.ValidFrom.After(now) {
		return t.ID, nil
	}
	return t.ID, passes.Changed(ctx, q, a.clock.Now(), now, t.ValidFrom, t.ID)
}

// insertTicket writes t; a ticket of a vdv-ka-static product first takes
// the next VDV ticket number (docs/barcodes.md, "Ticket numbers"), unique
// among the issuer's tickets.
func (a *App) insertTicket(ctx context.Context, q store.Q, t ticketing.Ticket) error {
	if pr, ok := a.Catalog().Product(t.ProductID); ok && pr.Barcode() == catalog.BarcodeVDV && t.VDVNumber == 0 {
		n, err := q.NextVDVNumber(ctx, a.clock.Now())
		if err != nil {
			return err
		}
		t.VDVNumber = n
	}
	return q.InsertTicket(ctx, t)
}
