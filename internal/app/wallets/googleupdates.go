package wallets

import (
	"context"

	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/wallet/google"
)

// updateGoogleObject is the passes.JobGoogleObject handler: PATCH the ticket's
// transit object with its current state, validity, barcode and status
// text. Without the Google Wallet API configured there is nothing to
// update; an object Google does not know (404: never saved) needs nothing
// either, since a later save link inserts it as it is then. Any other
// failure is returned and retried with backoff.
func (w *Service) updateGoogleObject(ctx context.Context, j jobs.Job) error {
	api, g := w.options().GoogleAPI, w.options().Google
	if api == nil || g == nil {
		return nil
	}
	d, err := w.ticket(ctx, j.Payload)
	if apperr.KindOf(err) == apperr.NotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if !passes.GoogleCarries(d.Product) {
		// No object of it was made (its save link is refused); a job
		// queued before its product moved to a binary profile puts nothing
		// unreadable into a saved pass either.
		return nil
	}
	p, err := w.pass(d, "app.updateGoogleObject", true)
	if err != nil {
		return err
	}
	o := g.Object(p, w.Clock.Now())
	err = api.PatchObject(ctx, o.ID, google.Patch(o))
	if apperr.KindOf(err) == apperr.NotFound {
		return nil
	}
	return err
}

// putGoogleObject makes sure the issuer's class and object o exist at
// Google as o is now: the class is inserted once per instance (409: it
// exists), the object inserted, or patched when it exists already.
func (w *Service) putGoogleObject(ctx context.Context, api *google.Client, o google.TransitObject) error {
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
