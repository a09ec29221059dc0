package app

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// MaxRevocationReason bounds an operator's revocation reason (characters).
const MaxRevocationReason = 200

// revoke marks t invalid with reason and, while its validity has not ended,
// appends it to the revocation feed; entries of ended tickets are pruned in
// the same transaction, and its saved passes are updated (passes.Changed).
// A ticket that is already invalid is left alone.
func (a *App) revoke(ctx context.Context, q store.Q, t ticketing.Ticket, kind, reason string, now time.Time) error {
	changed, err := q.RevokeTicket(ctx, t.ID, kind+": "+reason, now)
	if err != nil || !changed {
		return err
	}
	if _, err := q.PruneRevocations(ctx, now); err != nil {
		return err
	}
	if err := passes.Changed(ctx, q, a.clock.Now(), now, now, t.ID); err != nil { // the pass shows "voided"
		return err
	}
	if t.ValidUntil.Before(now) {
		return nil // already over: no inspector will see it
	}
	_, err = q.AppendRevocation(ctx, ticketing.Revocation{TicketID: t.ID, Kind: kind, Reason: reason, RevokedAt: now, ValidUntil: t.ValidUntil})
	return err
}

// RevokeTicket is `farebox tickets revoke ID --reason …`: the ticket becomes
// invalid (ticket JSON, rendering engine, passes) and enters the
// revocation feed. Revoking an invalid ticket again is a 409.
func (a *App) RevokeTicket(ctx context.Context, claim idempotency.Claim, id, reason string) (ticketing.Ticket, error) {
	const op = "app.RevokeTicket"
	reason = strings.TrimSpace(reason)
	if reason == "" || utf8.RuneCountInString(reason) > MaxRevocationReason || !utf8.ValidString(reason) {
		return ticketing.Ticket{}, apperr.Validation(op, CodeInvalidRevocationReason, "/reason",
			"reason: give why the ticket is revoked (1 to "+strconv.Itoa(MaxRevocationReason)+" characters)")
	}
	now := a.clock.Now()
	var t ticketing.Ticket
	err := a.store.WriteClaimed(ctx, claim, func(q store.Q) error {
		var err error
		if t, err = q.Ticket(ctx, id); err != nil {
			return err
		}
		if t.InvalidatedAt != nil {
			return apperr.E(op, apperr.Conflict, CodeTicketAlreadyInvalid, "the ticket is already invalid: "+passes.RevokedReason(t))
		}
		if err := a.revoke(ctx, q, t, ticketing.RevocationRevoked, reason, now); err != nil {
			return err
		}
		t, err = q.Ticket(ctx, id)
		return err
	})
	if err == nil {
		a.notifyJobs()
	}
	return t, err
}
