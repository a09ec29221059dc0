package app

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/wallet/google"
)

// JobGoogleObject is the job kind that brings a ticket's saved Google
// Wallet object up to date (payload: the ticket id).
const JobGoogleObject = "google.object"

// initPassUpdates registers the pass update handlers. Jobs are enqueued by
// every process that changes tickets (the CLI too); they run on the
// servers, whose Wallets know the credentials.
func (a *App) initPassUpdates() {
	if a.Jobs != nil {
		a.Jobs.Handle(JobGoogleObject, a.updateGoogleObject)
		a.Jobs.HandleBatch(JobApplePassUpdate, applePushBatch, a.applePassUpdates)
	}
}

// updateGoogleObject is the JobGoogleObject handler: PATCH the ticket's
// transit object with its current state, validity, barcode and status
// text. Without the Google Wallet API configured there is nothing to
// update; an object Google does not know (404: never saved) needs nothing
// either, since a later save link inserts it as it is then. Any other
// failure is returned and retried with backoff.
func (a *App) updateGoogleObject(ctx context.Context, j jobs.Job) error {
	w := a.wallets.Load()
	api, g := w.options().GoogleAPI, w.options().Google
	if api == nil || g == nil {
		return nil
	}
	d, err := a.Ticket(ctx, j.Payload)
	if apperr.KindOf(err) == apperr.NotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if !googleCarries(d.Product) {
		// No object of it was made (its save link is refused); a job
		// queued before its product moved to a binary profile puts nothing
		// unreadable into a saved pass either.
		return nil
	}
	p, err := w.pass(d, "app.updateGoogleObject", true)
	if err != nil {
		return err
	}
	o := g.Object(p, a.clock.Now())
	err = api.PatchObject(ctx, o.ID, google.Patch(o))
	if apperr.KindOf(err) == apperr.NotFound {
		return nil
	}
	return err
}

// enqueueGoogleObject queues the JobGoogleObject of ticket id, due at runAt
// (passesChanged). A ticket whose product uses a binary barcode profile
// gets none: Google Wallet offers it no pass (googleCarries), so no object
// of it exists to update. The product is read from the stored catalog: the
// CLI changes tickets without loading the catalog.
func enqueueGoogleObject(ctx context.Context, q store.Q, id string, runAt, at time.Time) error {
	p, ok, err := q.ProductOfTicket(ctx, id)
	if err != nil {
		return err
	}
	if ok && !googleCarries(&p) {
		return nil
	}
	return q.EnqueueJob(ctx, jobs.NewJob{Kind: JobGoogleObject, Payload: id, RunAt: runAt}, at)
}

// putGoogleObject makes sure the issuer's class and object o exist at
// Google as o is now: the class is inserted once per instance (409: it
// exists), the object inserted, or patched when it exists already.
func (w *Wallets) putGoogleObject(ctx context.Context, api *google.Client, o google.TransitObject) error {
	if !w.googleClass.Load() {
		if cl, ok := w.o.Google.Class(); ok {
			if err := api.InsertClass(ctx, cl); err != nil && apperr.KindOf(err) != apperr.Conflict {
				return err
			}
		}
		w.googleClass.Store(true)
	}
	err := api.InsertObject(ctx, o)
	if apperr.KindOf(err) == apperr.Conflict {
		err = api.PatchObject(ctx, o.ID, google.Patch(o))
	}
	return err
}
