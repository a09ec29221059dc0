package webusers

// Web sessions: the cookie sessions of the operator console and the partner
// dashboard, and the one-time notice a session carries to its next page.
// (sessions.go is the other kind: the session tokens that meter transit.)

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"github.com/farebox/farebox/internal/idempotency"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
)

// WebSessionTTL is how long a console session lasts after sign-in.
const WebSessionTTL = 12 * time.Hour

// flashKey is the key that seals a session's one-time notice: derived from
// the session id, which only the browser's cookie holds (the store keeps
// its hash), so the stored notice reveals nothing without the cookie.
func flashKey(sessionID string) []byte {
	m := hmac.New(sha256.New, []byte(sessionID))
	m.Write([]byte("farebox web flash"))
	return m.Sum(nil)
}

// SetWebFlash leaves notice for the session's next page (POST-redirect-GET:
// a new key or signing secret is shown once on the page after the
// redirect). The notice is sealed (AES-256-GCM) under flashKey.
func (s *Service) SetWebFlash(ctx context.Context, sessionID, notice string) error {
	const op = "app.SetWebFlash"
	block, err := aes.NewCipher(flashKey(sessionID))
	if err != nil {
		return apperr.Wrap(op, err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return apperr.Wrap(op, err)
	}
	nonce := make([]byte, gcm.NonceSize())
	_, _ = rand.Read(nonce)
	sealed := base64.RawStdEncoding.EncodeToString(gcm.Seal(nonce, nonce, []byte(notice), []byte(WebSessionHash(sessionID))))
	return s.DB.Write(ctx, func(q Queries) error {
		return q.SetWebSessionFlash(ctx, WebSessionHash(sessionID), sealed, s.Clock.Now())
	})
}

// TakeWebFlash returns the session's one-time notice and clears it: the
// next page (a reload) shows it no more. "" when there is none.
func (s *Service) TakeWebFlash(ctx context.Context, sessionID string) (string, error) {
	var sealed string
	err := s.DB.Write(ctx, func(q Queries) (err error) {
		sealed, err = q.TakeWebSessionFlash(ctx, WebSessionHash(sessionID))
		return
	})
	if err != nil || sealed == "" {
		return "", err
	}
	raw, err := base64.RawStdEncoding.DecodeString(sealed)
	block, cerr := aes.NewCipher(flashKey(sessionID))
	if err != nil || cerr != nil {
		return "", nil // not ours to show
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil || len(raw) < gcm.NonceSize() {
		return "", nil
	}
	plain, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], []byte(WebSessionHash(sessionID)))
	if err != nil {
		return "", nil
	}
	return string(plain), nil
}

// WebSessionHash is what the store keeps of a session id.
func WebSessionHash(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// WebSession returns the live session with id (NotFound when unknown or
// expired).
func (s *Service) WebSession(ctx context.Context, id string) (WebSession, error) {
	ws, err := s.session(ctx, id)
	return sessionView(ws), err
}

func (s *Service) session(ctx context.Context, id string) (account.WebSession, error) {
	if id == "" || len(id) > 100 {
		return account.WebSession{}, apperr.NotFoundf("app.WebSession", CodeNotFound)
	}
	return s.DB.Read().WebSession(ctx, WebSessionHash(id), s.Clock.Now())
}

// SignOut ends the session with id.
func (s *Service) SignOut(ctx context.Context, claim idempotency.Claim, id string) error {
	return s.DB.WriteClaimed(ctx, claim, func(q Queries) error { return q.DeleteWebSession(ctx, WebSessionHash(id)) })
}

// WebSession is a signed-in person on the web pages as the pages see it
// (the stored row, account.WebSession, also holds the id's hash, the
// times and the credential's fingerprint, which stay here).
type WebSession struct {
	Kind      string // WebOperator or WebDashboard
	Subject   string // the operator's user name, the dashboard user's e-mail
	AccountID string // "" for the operator
	// Flash is the sealed one-time notice waiting for the session's next
	// page ("" for none; TakeFlash opens it).
	Flash string
}

func sessionView(ws account.WebSession) WebSession {
	return WebSession{Kind: ws.Kind, Subject: ws.Subject, AccountID: ws.AccountID, Flash: ws.Flash}
}

// WebOperator is the kind of the operator's sessions.
const WebOperator = account.WebOperator

// WebDashboard is the kind of a partner dashboard user's sessions.
const WebDashboard = account.WebDashboard
