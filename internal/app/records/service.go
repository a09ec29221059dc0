// Package records is the capability of the records for the central
// reporting (issue 31 §3, docs/records.md): the inspectors the operator
// creates and their devices' tokens, the inspection records the devices
// post (POST /v1/inspection/records.json), and the daily export of the
// issuance and inspection records, pseudonymised and encrypted to the
// reporting system's age recipient. It reaches the database only through
// Queries.
package records

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/records"
)

// Queries are the store methods of the records (store.Q implements them;
// the wiring passes store.NewView[Queries]).
type Queries interface {
	InsertInspector(ctx context.Context, i records.Inspector) error
	Inspectors(ctx context.Context) ([]records.Inspector, error)
	InspectorByToken(ctx context.Context, tokenHash string) (records.Inspector, error)
	RevokeInspector(ctx context.Context, nameOrID string, at time.Time) (bool, error)
	InsertInspections(ctx context.Context, rs []records.Inspection) (ids []string, created []bool, err error)
	InspectionsReceived(ctx context.Context, from, to time.Time) ([]records.Inspection, error)
	IssuedLive(ctx context.Context, from, to time.Time) ([]records.Issued, error)
	LoadCatalog(ctx context.Context) (*catalog.File, int64, error)
	// The scheduled export's claim on a day (ExportDue), and the newest
	// day written.
	NewestIdempotencyKey(ctx context.Context, scope string) (string, error)
	ClaimIdempotencyKey(ctx context.Context, scope, key, hash string, at time.Time, lease time.Duration) (bool, idempotency.Record, error)
	CompleteIdempotencyKey(ctx context.Context, scope, key string, status int, contentType string, body []byte) error
	ReleaseIdempotencyKey(ctx context.Context, scope, key string) error
}

// DB is the database as the records see it (store.View).
type DB = kit.DB[Queries]

// Service holds the use cases of the records.
type Service struct {
	kit.Base[DB]
}

// New returns the records of db; c is the service clock (nil: the system
// clock), ids the id prefix.
func New(db DB, c clock.Clock, ids ident.Prefix) *Service {
	return &Service{Base: kit.NewBase(db, c, ids)}
}

// tokenPrefix starts every inspector device token, so a leaked one is
// recognisable (and told apart from a partner's API key).
const tokenPrefix = "fbi_"

// Inspector is an inspector as the command line lists it.
type Inspector struct {
	ID          string
	Name        string
	TokenPrefix string
	HasPassword bool
	CreatedAt   time.Time
	RevokedAt   *time.Time
}

func inspectorView(i records.Inspector) Inspector {
	return Inspector{ID: i.ID, Name: i.Name, TokenPrefix: i.TokenPrefix, HasPassword: i.PasswordHash != "",
		CreatedAt: i.CreatedAt, RevokedAt: i.RevokedAt}
}

// Device is the authenticated inspection device of a request.
type Device struct {
	InspectorID string
}

// AddInspector creates the inspector called name and returns it with its
// device token, shown this once (only its SHA-256 is stored).
func (s *Service) AddInspector(ctx context.Context, name string) (Inspector, string, error) {
	const op = "records.AddInspector"
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > records.MaxInspectorLen || !utf8.ValidString(name) || strings.ContainsAny(name, "\x00\n\r\t") {
		return Inspector{}, "", apperr.E(op, apperr.Invalid, CodeInvalidInspectorName,
			"an inspector's name is 1 to 100 characters on one line")
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return Inspector{}, "", apperr.Wrap(op, err)
	}
	token := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	i := records.Inspector{ID: s.IDs.New("inspector"), Name: name, TokenHash: hashToken(token),
		TokenPrefix: token[:len(tokenPrefix)+6], CreatedAt: s.Clock.Now()}
	err := s.DB.Write(ctx, func(q Queries) error { return q.InsertInspector(ctx, i) })
	if apperr.KindOf(err) == apperr.Conflict {
		return Inspector{}, "", apperr.E(op, apperr.Conflict, CodeInspectorNameTaken, "an inspector called "+name+" exists already")
	}
	if err != nil {
		return Inspector{}, "", err
	}
	return inspectorView(i), token, nil
}

// Inspectors lists the inspectors, revoked ones too.
func (s *Service) Inspectors(ctx context.Context) ([]Inspector, error) {
	is, err := s.DB.Read().Inspectors(ctx)
	out := make([]Inspector, 0, len(is))
	for _, i := range is {
		out = append(out, inspectorView(i))
	}
	return out, err
}

// RevokeInspector ends the inspector's token (and account) at once; false
// when there is no such inspector still active.
func (s *Service) RevokeInspector(ctx context.Context, nameOrID string) (bool, error) {
	var ok bool
	err := s.DB.Write(ctx, func(q Queries) (err error) {
		ok, err = q.RevokeInspector(ctx, nameOrID, s.Clock.Now())
		return err
	})
	return ok, err
}

// Authenticate resolves a device token: an unknown token and a revoked
// inspector's are 401s. Tokens are compared by their SHA-256 (the lookup
// is by hash, the final comparison in constant time).
func (s *Service) Authenticate(ctx context.Context, token string) (Device, error) {
	const op = "records.Authenticate"
	if !strings.HasPrefix(token, tokenPrefix) || len(token) > 128 {
		return Device{}, apperr.E(op, apperr.Unauthenticated, CodeInvalidInspectorToken, "unknown inspector token")
	}
	h := hashToken(token)
	i, err := s.DB.Read().InspectorByToken(ctx, h)
	if apperr.KindOf(err) == apperr.NotFound || (err == nil && subtle.ConstantTimeCompare([]byte(i.TokenHash), []byte(h)) != 1) {
		return Device{}, apperr.E(op, apperr.Unauthenticated, CodeInvalidInspectorToken, "unknown inspector token")
	}
	if err != nil {
		return Device{}, err
	}
	if i.RevokedAt != nil {
		return Device{}, apperr.E(op, apperr.Unauthenticated, CodeInspectorRevoked, "this inspector's token was revoked")
	}
	return Device{InspectorID: i.ID}, nil
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
