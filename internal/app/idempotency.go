package app

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
)

// Idempotency-Key handling (decisions.md "Requests and responses"): the
// transport hashes the request and names the caller's scope; app claims the
// key, replays a kept answer, and keeps or releases the answer afterwards.

// StoredResponse is the answer kept for an Idempotency-Key and replayed for
// every repeat of the request.
type StoredResponse struct {
	Status      int
	ContentType string
	Body        []byte
}

// Claim names the Idempotency-Key a request holds (idempotency.Claim); the
// zero Claim is none. The transport hands it to the use case the request
// runs, which passes it to the one write that commits its change.
type Claim = idempotency.Claim

// ClaimIdempotencyKey claims (scope, key) for the request whose hash is
// hash. When the caller now holds the claim it gets the claim and a nil
// replay; the request's use case takes the claim as a parameter and hands
// it to the one write that commits its change (store.Store.WriteClaimed,
// InsertOrderAlone), which marks the claim committed in the same
// transaction, so a take-over after a crash does not run it twice; no other
// write marks it. The caller must then call CompleteIdempotencyKey or
// ReleaseIdempotencyKey. A completed earlier run comes back as the replay.
// A claim outlives the request holding it by lease: by then that request
// has answered or its instance is gone, and a retry may take the key over.
func (a *App) ClaimIdempotencyKey(ctx context.Context, scope, key, hash string, lease time.Duration) (Claim, *StoredResponse, error) {
	const op = "idempotency"
	now := a.clock.Now()
	var claimed bool
	var rec idempotency.Record
	err := a.store.Write(ctx, func(q store.Q) (err error) {
		claimed, rec, err = q.ClaimIdempotencyKey(ctx, scope, key, hash, now, lease)
		return err
	})
	if err != nil {
		return Claim{}, nil, err
	}
	if claimed {
		return Claim{Scope: scope, Key: key}, nil, nil
	}
	switch {
	case rec.RequestHash != hash:
		return Claim{}, nil, apperr.E(op, apperr.Unprocessable, CodeIdempotencyKeyReused,
			"this Idempotency-Key was already used with a different request")
	case rec.Status == 0 && rec.Committed && rec.ContentType == store.ErasedAnswer:
		return Claim{}, nil, apperr.E(op, apperr.Conflict, CodeIdempotencyKeyOutcomeUnknown,
			"the request with this Idempotency-Key was carried out; its answer held personal data that was erased on request, so it is not kept; look the result up instead of retrying")
	case rec.Status == 0 && rec.Committed && rec.LockedUntil.Before(now):
		return Claim{}, nil, apperr.E(op, apperr.Conflict, CodeIdempotencyKeyOutcomeUnknown,
			"the request with this Idempotency-Key was carried out, but its answer was lost in a server failure; look the result up instead of retrying")
	case rec.Status == 0:
		return Claim{}, nil, apperr.E(op, apperr.Conflict, CodeIdempotencyKeyInFlight,
			"a request with this Idempotency-Key is still being processed; retry shortly")
	}
	return Claim{}, &StoredResponse{Status: rec.Status, ContentType: rec.ContentType, Body: rec.Body}, nil
}

// CompleteIdempotencyKey keeps resp as the answer of the claimed key.
func (a *App) CompleteIdempotencyKey(ctx context.Context, scope, key string, resp StoredResponse) error {
	return a.store.Write(ctx, func(q store.Q) error {
		return q.CompleteIdempotencyKey(ctx, scope, key, resp.Status, resp.ContentType, resp.Body)
	})
}

// ReleaseIdempotencyKey gives the claimed key up: the service failed (5xx)
// and committed nothing, so the client may retry with the same key.
func (a *App) ReleaseIdempotencyKey(ctx context.Context, scope, key string) error {
	return a.store.Write(ctx, func(q store.Q) error { return q.ReleaseIdempotencyKey(ctx, scope, key) })
}

// TrackCommits marks ctx as one request's use case: once a write of it
// commits, the request's end (its timeout) no longer cancels its later
// statements, so the answer says what was done instead of
// request_cancelled about a change that happened (store.TrackCommits).
func TrackCommits(ctx context.Context) context.Context { return store.TrackCommits(ctx) }

// IdempotencyScope is the scope of the Idempotency-Keys of requests made
// with p's key (idempotency.Scope; the transport names no domain package).
func IdempotencyScope(p account.Principal) string { return idempotency.Scope(p) }
