package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/metering"
	"github.com/farebox/farebox/internal/store"
)

// SessionHeader is the header carrying session tokens both ways.
const SessionHeader = metering.Header

// Sessions signs and checks the session tokens that meter departure boards
// per station and trips per trip id (docs/departures.md): a token's
// unexpired block for a resource makes a repeat request within the block
// unbilled. Tokens are bound to the account and its environment.
type Sessions struct {
	app    *App
	signer *metering.Signer
}

// NewSessions signs with key; every instance must share it (SessionKey).
// An empty key is a random one for this process only.
func (a *App) NewSessions(key []byte) *Sessions {
	if len(key) == 0 {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	return &Sessions{app: a, signer: metering.NewSigner(key)}
}

// sessionAccount binds tokens to the account in its environment, so a test
// key's token is foreign to live.
func sessionAccount(p Principal) string { return p.AccountID + "/" + string(p.Environment) }

// Station applies the session-block rule to a board of station id: counted
// is false when token holds an unexpired block for it; next is the token
// to send back.
func (s *Sessions) Station(p Principal, token, id string) (counted bool, next string) {
	return s.signer.Check(sessionAccount(p), token, metering.StationResource(id), s.app.clock.Now())
}

// Trip applies the session-block rule to trip id.
func (s *Sessions) Trip(p Principal, token, id string) (counted bool, next string) {
	return s.signer.Check(sessionAccount(p), token, metering.TripResource(id), s.app.clock.Now())
}

// Renew is the token to send back on a transit response metered per
// request: the caller's blocks, expired ones dropped.
func (s *Sessions) Renew(p Principal, token string) string {
	return s.signer.Renew(sessionAccount(p), token, s.app.clock.Now())
}

// sessionKeySecret names the generated session-token key in service_secrets.
const sessionKeySecret = "session-token-hmac"

// SessionKey returns the HMAC key of session tokens: configured when set
// (--session-key), otherwise a random 32-byte key generated once and kept in
// the database, so every instance on one database signs and checks with the
// same key.
func (a *App) SessionKey(ctx context.Context, configured string) ([]byte, error) {
	if configured != "" {
		return []byte(configured), nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, apperr.Wrap("app.SessionKey", err)
	}
	var v string
	err := a.store.Write(ctx, func(q store.Q) (err error) {
		v, err = q.EnsureSecret(ctx, sessionKeySecret, hex.EncodeToString(b), a.clock.Now())
		return err
	})
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(v)
	if err != nil || len(key) < 16 {
		return nil, apperr.E("app.SessionKey", apperr.Internal, CodeSecretCorrupt, "stored session key is not a hex key")
	}
	return key, nil
}
