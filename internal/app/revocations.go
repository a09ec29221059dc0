package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"github.com/farebox/farebox/internal/idempotency"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// MaxRevocationReason bounds an operator's revocation reason (characters).
const MaxRevocationReason = 200

// revoke marks t invalid with reason and, while its validity has not ended,
// appends it to the revocation feed; entries of ended tickets are pruned in
// the same transaction, and its saved passes are updated (passesChanged).
// A ticket that is already invalid is left alone.
func (a *App) revoke(ctx context.Context, q store.Q, t ticketing.Ticket, kind, reason string, now time.Time) error {
	changed, err := q.RevokeTicket(ctx, t.ID, kind+": "+reason, now)
	if err != nil || !changed {
		return err
	}
	if _, err := q.PruneRevocations(ctx, now); err != nil {
		return err
	}
	if err := a.passesChanged(ctx, q, now, now, t.ID); err != nil { // the pass shows "voided"
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
func (a *App) RevokeTicket(ctx context.Context, id, reason string) (ticketing.Ticket, error) {
	const op = "app.RevokeTicket"
	reason = strings.TrimSpace(reason)
	if reason == "" || utf8.RuneCountInString(reason) > MaxRevocationReason || !utf8.ValidString(reason) {
		return ticketing.Ticket{}, apperr.Validation(op, CodeInvalidRevocationReason, "/reason",
			"reason: give why the ticket is revoked (1 to "+strconv.Itoa(MaxRevocationReason)+" characters)")
	}
	now := a.clock.Now()
	var t ticketing.Ticket
	err := a.store.WriteClaimed(ctx, idempotency.ClaimOf(ctx), func(q store.Q) error {
		var err error
		if t, err = q.Ticket(ctx, id); err != nil {
			return err
		}
		if t.InvalidatedAt != nil {
			return apperr.E(op, apperr.Conflict, CodeTicketAlreadyInvalid, "the ticket is already invalid: "+revokedReason(t))
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

// revokedReason is the reason shown for an invalid ticket.
func revokedReason(t ticketing.Ticket) string {
	if t.RevokedReason != nil {
		return *t.RevokedReason
	}
	return ticketing.RevocationRestored + ": replaced by the ticket of a restored coupon"
}

// revocationKind is the kind part of revokedReason (ticketing.Revocation*).
func revocationKind(t ticketing.Ticket) string {
	kind, _, _ := strings.Cut(revokedReason(t), ": ")
	return kind
}

// RevocationFeed is the signed body of GET /v1/inspection/revocations.json.
type RevocationFeed struct {
	Body      []byte // the canonical feed JSON, exactly as signed
	Signature []byte // Ed25519 over barcode.RevocationContext + Body
	KeyID     string
}

// MarshalJSON writes {"feed": <Body>, "signature": {...}}: the signature is
// detached from the bytes it covers, which stay verbatim in "feed".
func (f RevocationFeed) MarshalJSON() ([]byte, error) {
	sig, err := json.Marshal(barcode.FeedSignature{KeyID: f.KeyID, Alg: "Ed25519", Sig: base64.RawURLEncoding.EncodeToString(f.Signature)})
	if err != nil {
		return nil, err
	}
	return []byte(`{"feed":` + string(f.Body) + `,"signature":` + string(sig) + `}`), nil
}

// Revocations is the revocation feed after since (0: all), signed with the
// active live inspection key.
func (w *Wallets) Revocations(ctx context.Context, since int64) (RevocationFeed, error) {
	const op = "app.Revocations"
	kr := w.keyring()
	if kr == nil {
		return RevocationFeed{}, apperr.E(op, apperr.Unavailable, CodeInspectionKeysNotConfigured, "no inspection keys are configured")
	}
	if since < 0 {
		return RevocationFeed{}, apperr.Param("query", "since", "since must be a feed sequence number (0 or more)")
	}
	now := w.app.clock.Now()
	rs, last, err := w.app.store.Read().Revocations(ctx, since, now)
	if err != nil {
		return RevocationFeed{}, err
	}
	feed := barcode.Feed{Version: 1, GeneratedAt: clock.Timestamp(now), Since: since, LastSeq: last, Revocations: make([]barcode.FeedEntry, len(rs))}
	for i, r := range rs {
		feed.Revocations[i] = barcode.FeedEntry{Seq: r.Seq, TicketID: r.TicketID, Kind: r.Kind, Reason: r.Reason,
			RevokedAt: clock.Timestamp(r.RevokedAt), ValidUntil: clock.Timestamp(r.ValidUntil)}
		if r.Kind == ticketing.RevocationKey {
			feed.Revocations[i].Kid = strconv.Itoa(int(r.KeyID))
		}
	}
	body, sig, key, err := barcode.SignFeed(feed, kr)
	if err != nil {
		return RevocationFeed{}, err
	}
	return RevocationFeed{Body: body, Signature: sig, KeyID: key.Kid()}, nil
}
