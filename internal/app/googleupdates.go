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

// passesChanged is the one place a change of a ticket that its wallet
// passes show (voided by a restore, revoked, re-signed after a key
// revocation, a new cycle or validity) reaches the passes: it enqueues the
// update jobs in the caller's transaction q, so a committed change always
// has its jobs and a rolled-back one never does. The jobs run in the
// background (retried with backoff, never inside a request); call
// a.notifyJobs() after the commit to start them at once.
//
// Apple Wallet pushes (the PassKit web service) are enqueued here too when
// merged with that branch.
func passesChanged(ctx context.Context, q store.Q, ticketID string, at time.Time) error {
	return q.EnqueueJob(ctx, jobs.NewJob{Kind: JobGoogleObject, Payload: ticketID}, at)
}

// initPassUpdates registers the pass update handlers. Jobs are enqueued by
// every process that changes tickets (the CLI too); they run on the
// servers, whose Wallets know the credentials.
func (a *App) initPassUpdates() {
	if a.Jobs != nil {
		a.Jobs.Handle(JobGoogleObject, a.updateGoogleObject)
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

// notifyJobs wakes this instance's job runner after a commit that enqueued
// jobs (other instances find them within their poll interval).
func (a *App) notifyJobs() {
	if a.Jobs != nil {
		a.Jobs.Notify()
	}
}
