// Package passes is what the application and the wallets share about a
// ticket's passes (docs/wallet.md): the ticket as both read it
// (TicketDetails), what the wallets offer for it (Offer), whether a Google
// pass can carry its barcode (GoogleCarries) and the one place every ticket
// change enqueues its pass updates (Changed). Ordering, activation,
// restores, revocations, key revocations and test clock advances change
// tickets inside their own transactions and call Changed there; the jobs it
// enqueues are run by package wallets. It imports no capability and not
// internal/app (usecase-shared).
package passes

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/jobs"
)

// Queries are the store methods Changed uses (store.Q implements them).
type Queries interface {
	ProductOfTicket(ctx context.Context, ticketID string) (catalog.Product, bool, error)
	CountApplePasses(ctx context.Context, ticketID string) (int, error)
	EnqueueJob(ctx context.Context, j jobs.NewJob, at time.Time) error
}

// JobApplePassUpdate is the job kind that tags the Apple passes following
// the coupon of one ticket (the payload) as updated and pushes to their
// devices through APNs.
const JobApplePassUpdate = "wallet.apple.update"

// JobGoogleObject is the job kind that brings a ticket's saved Google
// Wallet object up to date (payload: the ticket id).
const JobGoogleObject = "google.object"

// UpdateAttempts bounds the retries of one Apple update job (backoff 2 s
// doubling, capped at 10 minutes: about 40 minutes in all).
const UpdateAttempts = 10

// Changed enqueues, inside the transaction q of the change, the update of
// the passes of ticketIDs, due at effective (a cycle's start) or now when
// that has passed; svc is the service's time. at and effective are on the
// time of the changed objects (their test clock's, docs/test-clocks.md); a
// change due now is scheduled on the service's time (a clock's time says
// nothing about when the runner gets to it); a later effective time is on
// the service's time too, so objects on a clock must not come here with
// one: advancing their clock past it enqueues the update (the application's
// advance job). The caller wakes the job workers after the commit. A change
// due now always enqueues the Google job: the process that changes a
// ticket (the CLI too) does not know whether the servers have Google
// credentials, and the job finishes without a call when they have none or
// Google never saw the object; a ticket with a binary barcode profile gets
// none, as it has no Google pass (enqueueGoogleObject). A change due later
// (the next cycle's ticket, issued ahead of its start) enqueues none: a
// saved Google object of that ticket already holds its validity, and
// nothing in it changes at the start. An Apple change due now is enqueued
// only when a pass follows the ticket's coupon: a pass built later shows
// the change anyway. A change due later is always enqueued: its pass may
// be built meanwhile.
func Changed(ctx context.Context, q Queries, svc, at, effective time.Time, ticketIDs ...string) error {
	runAt := svc
	if effective.After(at) {
		runAt = effective
	}
	for _, id := range ticketIDs {
		if !runAt.After(svc) {
			if err := enqueueGoogleObject(ctx, q, id, runAt, svc); err != nil {
				return err
			}
			n, err := q.CountApplePasses(ctx, id)
			if err != nil {
				return err
			}
			if n == 0 {
				continue
			}
		}
		if err := q.EnqueueJob(ctx, jobs.NewJob{Kind: JobApplePassUpdate, Payload: id, RunAt: runAt, MaxAttempts: UpdateAttempts}, svc); err != nil {
			return err
		}
	}
	return nil
}

// enqueueGoogleObject queues the JobGoogleObject of ticket id, due at runAt
// (Changed). A ticket whose product uses a binary barcode profile gets
// none: Google Wallet offers it no pass (GoogleCarries), so no object of it
// exists to update. The product is read from the stored catalog: the CLI
// changes tickets without loading the catalog.
func enqueueGoogleObject(ctx context.Context, q Queries, id string, runAt, at time.Time) error {
	p, ok, err := q.ProductOfTicket(ctx, id)
	if err != nil {
		return err
	}
	if ok && !GoogleCarries(&p) {
		return nil
	}
	return q.EnqueueJob(ctx, jobs.NewJob{Kind: JobGoogleObject, Payload: id, RunAt: runAt}, at)
}

// GoogleCarries reports whether a Google Wallet pass can carry the
// inspection barcode of product p's tickets. Google renders a barcode from
// a text value only (Barcode.value is a string; its renderEncoding knows
// UTF_8, for QR codes, and nothing else), so a binary barcode could travel
// only as its base64url text: an Aztec code no UIC or VDV device reads.
// farebox's own profile is read by `farebox inspect`, which accepts that
// text form; the binary profiles (uic-918-3-uflex, vdv-ka-static, any
// later one) get no Google pass (docs/wallet.md, "Google Wallet and binary
// barcodes").
func GoogleCarries(p *catalog.Product) bool {
	return p == nil || p.Barcode() == catalog.BarcodeFarebox
}
