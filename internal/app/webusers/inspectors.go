package webusers

// Inspectors in the inspector app (/inspect, docs/inspect.md): the
// password the operator sets (`farebox inspectors password`), hashed like
// the console's and the dashboard's (argon2id, hashPassword), and the
// sign-in that opens an inspector session. The app holds the session's
// token and sends it as "Authorization: Bearer fbis_…" to the inspection
// records route, which accepts it like a device token; the session opens
// nothing else (no page, no partner data).

import (
	"context"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/store"
)

// InspectorTokenPrefix starts an inspector app session's bearer token (a
// device token starts "fbi_").
const InspectorTokenPrefix = "fbis_"

// SetInspectorPassword sets the password of the active inspector called
// nameOrID (its name or id): at least MinPasswordLength characters. The
// inspector's open app sessions end (they were opened with the old one).
func (s *Service) SetInspectorPassword(ctx context.Context, nameOrID, password string) error {
	const op = "webusers.SetInspectorPassword"
	if err := checkPassword(op, password, password); err != nil {
		return err
	}
	phc, err := hashPassword(password)
	if err != nil {
		return apperr.Wrap(op, err)
	}
	var ok bool
	err = s.DB.Write(ctx, func(q Queries) (err error) {
		ok, err = q.SetInspectorPassword(ctx, nameOrID, phc)
		return err
	})
	if err == nil && !ok {
		return apperr.NotFoundf(op, store.CodeInspectorNotFound)
	}
	return err
}

// InspectorSignIn is what a sign-in gives the inspector app: the bearer
// token (shown this once; the store keeps its SHA-256) and whom it names.
type InspectorSignIn struct {
	Token       string
	InspectorID string
	Name        string
	ExpiresAt   time.Time
}

// SignInInspector checks an inspector's name and password and opens an
// inspector session (WebSessionTTL, a shift). A wrong name or password, a
// revoked inspector and one without a password are all Unauthenticated
// after the same argon2id work, so the answer tells none of them apart.
func (s *Service) SignInInspector(ctx context.Context, name, password string) (InspectorSignIn, error) {
	const op = "webusers.SignInInspector"
	fail := apperr.E(op, apperr.Unauthenticated, CodeSignInFailed, "name or password is wrong")
	name = strings.TrimSpace(name)
	if len(name) > 400 || len(password) > maxPasswordBytes {
		return InspectorSignIn{}, fail
	}
	i, err := s.DB.Read().InspectorByName(ctx, name)
	if err != nil && apperr.KindOf(err) != apperr.NotFound {
		return InspectorSignIn{}, err
	}
	usable := err == nil && i.RevokedAt == nil && i.PasswordHash != ""
	phc := dummyHash
	if usable {
		phc = i.PasswordHash
	}
	h, err := parsePHC(phc)
	if err != nil {
		return InspectorSignIn{}, apperr.Wrap(op, err)
	}
	if !h.matches(password) || !usable {
		return InspectorSignIn{}, fail
	}
	id, ws := newWebSession(account.WebInspector, i.ID, "", s.Clock.Now())
	token := InspectorTokenPrefix + id
	ws.IDHash, ws.Credential = WebSessionHash(token), store.PasswordFingerprint(phc)
	if err := s.DB.Write(ctx, func(q Queries) error { return q.InsertWebSession(ctx, ws) }); err != nil {
		return InspectorSignIn{}, err
	}
	return InspectorSignIn{Token: token, InspectorID: i.ID, Name: i.Name, ExpiresAt: ws.ExpiresAt}, nil
}

// InspectorSession resolves an inspector app's bearer token to the
// inspector's id: NotFound unless it is a live inspector session of an
// inspector still active with the password it signed in with.
func (s *Service) InspectorSession(ctx context.Context, token string) (string, error) {
	if !strings.HasPrefix(token, InspectorTokenPrefix) {
		return "", apperr.NotFoundf("webusers.InspectorSession", CodeNotFound)
	}
	ws, err := s.session(ctx, token)
	if err != nil {
		return "", err
	}
	if ws.Kind != account.WebInspector {
		return "", apperr.NotFoundf("webusers.InspectorSession", CodeNotFound)
	}
	return ws.Subject, nil
}

// SignOutInspector ends the inspector session of token.
func (s *Service) SignOutInspector(ctx context.Context, token string) error {
	if !strings.HasPrefix(token, InspectorTokenPrefix) {
		return nil
	}
	return s.DB.Write(ctx, func(q Queries) error { return q.DeleteWebSession(ctx, WebSessionHash(token)) })
}
