// Package inspection is the inspection keys capability (docs/wallet.md,
// "Key rotation and compromise"; `farebox keys`): listing the stored keys
// with the tickets each still signs, rotating, pruning and revoking them.
// The keys themselves live in the key store it is handed (KeyStore:
// credentials.InspectionStore, the database or a key directory); the
// tickets they sign are reached through Queries. A key revocation re-signs
// tickets and so updates their passes (passes.Changed); the instances
// serving the barcodes and the revocation feed (package wallets) reload the
// keys on their own.
package inspection

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ticketing"
)

// Queries are the store methods the key use cases call (store.Q
// implements them; the wiring passes store.NewView[Queries]).
type Queries interface {
	passes.Queries // the pass updates of re-signed tickets
	InspectionKeyUse(ctx context.Context, validAt time.Time) (map[uint16]ticketing.KeyUse, error)
	StampTicketKeys(ctx context.Context, env account.Environment, kid uint16, validAt time.Time) (int64, error)
	StampTicketKeysIssuedBefore(ctx context.Context, env account.Environment, kid uint16, before, validAt time.Time) (int64, error)
	TicketsSignedWith(ctx context.Context, kid uint16, validAt time.Time) ([]ticketing.Ticket, error)
	ResignTickets(ctx context.Context, from, to uint16, validAt time.Time) (int64, error)
	PruneRevocations(ctx context.Context, before time.Time) (int64, error)
	KeyRevoked(ctx context.Context, kid uint16) (bool, error)
	AppendRevocation(ctx context.Context, r ticketing.Revocation) (int64, error)
}

// DB is the database as the key use cases see it (store.View).
type DB = kit.DB[Queries]

// KeyStore is where the inspection keys are kept (credentials.InspectionStore).
type KeyStore interface {
	// Load reads the stored keys (nothing is generated).
	Load(ctx context.Context, now time.Time) (*barcode.Keyring, error)
	// Rotate adds a new signing key for env that signs from from (zero: at once).
	Rotate(ctx context.Context, env string, now, from time.Time) (barcode.Key, error)
	// Remove deletes key kid; false when it was not stored.
	Remove(ctx context.Context, kid uint16) (bool, error)
}

// Service holds the inspection key use cases.
type Service struct {
	kit.Base[DB]
	keys   KeyStore
	notify func()
}

// New returns the key use cases over db and the key store keys; c is the
// service clock (nil: the system clock), notify (may be nil) wakes the job
// workers after a revocation queued pass updates.
func New(db DB, c clock.Clock, keys KeyStore, notify func()) *Service {
	if notify == nil {
		notify = func() {}
	}
	return &Service{Base: kit.NewBase(db, c, ""), keys: keys, notify: notify}
}

// Inspection key rotation and compromise (docs/wallet.md, "Key rotation
// and compromise"; docs/operations.md has the runbook). A ticket's barcode
// is signed with the key stamped on the ticket (tickets.inspection_kid), or
// the active key while none is stamped; `farebox keys rotate` stamps the
// unstamped valid tickets with the outgoing key and adds a new active one,
// so barcodes already on phones keep verifying while new tickets get the
// new key. A key is published until the last ticket it signs has ended
// (then `keys prune` deletes it). `farebox keys revoke KID` moves the still
// valid tickets of a compromised key to the active key (their barcodes are
// signed anew, their passes updated) and puts the key into the revocation
// feed, so inspectors reject what it signed.

// KeyRevocationMinFeed is how long a revoked key stays in the revocation
// feed at least (longer while a ticket it signed would still be valid):
// the key's holder could sign new tickets with any validity, and a device
// that has not refreshed keys.json since would accept them. Inspection
// devices must refresh keys.json (where the key no longer appears) within
// this period.
const KeyRevocationMinFeed = 31 * 24 * time.Hour

// KeyPublishAhead is how long, by default, a rotated key is published in
// keys.json before it signs anything (barcodes or the revocation feed):
// inspection devices sync keys.json daily (docs/wallet.md), so every device
// knows a key before it meets its first signature. `farebox keys rotate
// --publish-ahead` sets another time (0 for a compromise, where the
// successor must sign at once).
const KeyPublishAhead = 48 * time.Hour

// KeyInfo is one stored inspection key as `farebox keys list`
// shows it.
type KeyInfo struct {
	Kid         uint16 `json:"kid"`
	Environment string `json:"environment"`
	// Active: the key signs new tickets of its environment.
	Active bool `json:"active"`
	// Signing: the private half is stored (else the key only verifies).
	Signing bool `json:"signing"`
	// Tickets still valid whose barcode this key signs, and when the last
	// of them ends (the key is kept published until then).
	Tickets        int        `json:"tickets"`
	LastValidUntil *time.Time `json:"last_valid_until,omitempty"`
	// SignsFrom is when a rotated key starts signing (set for keys rotated
	// with a publication time; in the future while it is published ahead).
	SignsFrom *time.Time `json:"signs_from,omitempty"`
}

// Keys lists the stored keys with the tickets each still signs.
func (s *Service) Keys(ctx context.Context) ([]KeyInfo, error) {
	_, infos, err := s.keysInUse(ctx)
	return infos, err
}

// keysInUse is the stored keyring and each key's use by still-valid tickets.
func (s *Service) keysInUse(ctx context.Context) (*barcode.Keyring, []KeyInfo, error) {
	kr, err := s.keys.Load(ctx, s.Clock.Now())
	if err != nil {
		return nil, nil, err
	}
	use, err := s.DB.Read().InspectionKeyUse(ctx, s.Clock.Now())
	if err != nil {
		return nil, nil, err
	}
	return kr, keyInfos(kr, use), nil
}

func keyInfos(kr *barcode.Keyring, use map[uint16]ticketing.KeyUse) []KeyInfo {
	var out []KeyInfo
	for _, pk := range kr.KeySet().Keys {
		id, _ := strconv.ParseUint(pk.Kid, 10, 16)
		k, _ := kr.Lookup(uint16(id))
		info := KeyInfo{Kid: k.ID, Environment: pk.Environment, Active: pk.Active, Signing: k.CanSign()}
		if f, ok := kr.SignsFrom(k.ID); ok {
			info.SignsFrom = &f
		}
		if u, ok := use[k.ID]; ok {
			info.Tickets = u.Tickets
			last := u.LastValidUntil
			info.LastValidUntil = &last
		}
		out = append(out, info)
	}
	return out
}

// KeyRotation is the result of Rotate.
type KeyRotation struct {
	New       barcode.Key
	SignsFrom time.Time // when New starts signing (now for ahead 0)
	Old       uint16    // the key that signed new tickets until now (0: none)
	Stamped   int64     // valid tickets that keep the old key
	Pruned    []uint16  // keys deleted because no valid ticket needs them
}

// Rotate adds a new signing key for env (barcode.EnvLive or
// EnvTest) that is published at once and signs every ticket issued, and
// the revocation feed, from ahead later on (KeyPublishAhead by default; 0:
// at once), after stamping the valid tickets signed so far with the
// outgoing key, and prunes the keys no valid ticket needs (except the
// outgoing one: it signs until the new key starts, and an instance that has
// not reloaded the keys yet may still sign with it for a few seconds).
// Tickets issued while the new key waits are signed with the outgoing key
// for good (barcode.Keyring.SignerAt: the key of their issue).
func (s *Service) Rotate(ctx context.Context, env string, ahead time.Duration) (KeyRotation, error) {
	const op = "app.RotateInspectionKey"
	if env != barcode.EnvLive && env != barcode.EnvTest {
		return KeyRotation{}, apperr.Validation(op, barcode.CodeInvalidEnvironment, "/environment", `environment must be "live" or "test"`)
	}
	if ahead < 0 {
		return KeyRotation{}, apperr.Validation(op, CodeInvalidPublishAhead, "/publish_ahead", "publish-ahead must not be negative")
	}
	var r KeyRotation
	kr, err := s.keys.Load(ctx, s.Clock.Now())
	if err != nil {
		return r, err
	}
	now := s.Clock.Now()
	if old, ok := kr.ActiveFor(env); ok {
		r.Old = old.ID
		err := s.DB.Write(ctx, func(q Queries) error {
			r.Stamped, err = q.StampTicketKeys(ctx, account.Environment(env), old.ID, now)
			return err
		})
		if err != nil {
			return r, err
		}
	}
	var from time.Time
	if ahead > 0 {
		from = now.Add(ahead)
	}
	if r.New, err = s.keys.Rotate(ctx, env, now, from); err != nil {
		return r, err
	}
	r.SignsFrom = now.Add(ahead)
	r.Pruned, err = s.pruneKeys(ctx, r.Old)
	return r, err
}

// Prune deletes the stored keys that sign no new tickets and
// no still-valid ticket: their last ticket has ended, so no inspector needs
// them any more.
func (s *Service) Prune(ctx context.Context) ([]uint16, error) {
	return s.pruneKeys(ctx, 0)
}

func (s *Service) pruneKeys(ctx context.Context, keep uint16) ([]uint16, error) {
	if err := s.stampIssueKeys(ctx); err != nil {
		return nil, err
	}
	kr, infos, err := s.keysInUse(ctx)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	var pruned []uint16
	for _, k := range infos {
		if k.Active || k.Tickets > 0 || k.Kid == keep || isFallbackSigner(kr, k.Kid) || kr.Pending(k.Kid, now) {
			continue
		}
		removed, err := s.keys.Remove(ctx, k.Kid)
		if err != nil {
			return pruned, err
		}
		if removed {
			pruned = append(pruned, k.Kid)
		}
	}
	return pruned, nil
}

// stampIssueKeys stamps the still-valid unstamped tickets issued while a
// rotated key was published ahead with the key that signed them then (the
// key before the active one: barcode.Keyring.SignerAt), so pruning sees
// that key in use while they are valid. Their barcodes do not change.
func (s *Service) stampIssueKeys(ctx context.Context) error {
	kr, err := s.keys.Load(ctx, s.Clock.Now())
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	return s.DB.Write(ctx, func(q Queries) error {
		for _, env := range []string{barcode.EnvLive, barcode.EnvTest} {
			act, ok := kr.ActiveFor(env)
			if !ok {
				continue
			}
			from, ok := kr.SignsFrom(act.ID)
			if !ok {
				continue
			}
			prev, ok := kr.SignerAt(env, from.Add(-time.Nanosecond))
			if !ok || prev.ID == act.ID || prev.Environment() != env {
				continue
			}
			if _, err := q.StampTicketKeysIssuedBefore(ctx, account.Environment(env), prev.ID, from, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// isFallbackSigner: kid signs some environment's new tickets (the live key
// signs test tickets when there is no test key).
func isFallbackSigner(kr *barcode.Keyring, kid uint16) bool {
	for _, env := range []string{barcode.EnvLive, barcode.EnvTest} {
		if k, ok := kr.ActiveFor(env); ok && k.ID == kid {
			return true
		}
	}
	return false
}

// KeyRevocation is the result of Revoke.
type KeyRevocation struct {
	Kid       uint16
	Successor uint16    // the key that signs the moved tickets
	Resigned  int       // still-valid tickets moved to Successor
	FeedUntil time.Time // the key's revocation feed entry is kept until then
	// AlreadyInFeed: an earlier run entered the key already (this run only
	// finished what it left, e.g. deleting the key).
	AlreadyInFeed bool
	Removed       bool // the key was deleted from the key store
}

// MaxKeyRevocationReason bounds the reason of a key revocation
// (characters; as a ticket's, app.MaxRevocationReason).
const MaxKeyRevocationReason = 200

// Revoke is `farebox keys revoke KID`: in one transaction
// every still-valid ticket signed with the key is moved to the active key
// of its environment (the traveller's next ticket read carries the new
// barcode), each gets its pass updates (passes.Changed), and the key enters
// the revocation feed (kind "key") until the last of its tickets has ended,
// at least KeyRevocationMinFeed; then the key is deleted from the key
// store, so keys.json stops publishing it. The key signing new tickets
// cannot be revoked: rotate first, so there is a successor. Running it
// again after a partial failure finishes the job.
func (s *Service) Revoke(ctx context.Context, kid, reason string) (KeyRevocation, error) {
	const op = "app.RevokeInspectionKey"
	n, err := strconv.ParseUint(strings.TrimSpace(kid), 10, 16)
	if err != nil || n == 0 {
		return KeyRevocation{}, apperr.Validation(op, CodeInvalidKeyID, "/kid", "kid: "+strconv.Quote(kid)+" is not an inspection key id (1 to 65535; `farebox keys list` shows them)")
	}
	reason = strings.TrimSpace(reason)
	if reason == "" || utf8.RuneCountInString(reason) > MaxKeyRevocationReason || !utf8.ValidString(reason) {
		return KeyRevocation{}, apperr.Validation(op, CodeInvalidRevocationReason, "/reason",
			"reason: give why the key is revoked (1 to "+strconv.Itoa(MaxKeyRevocationReason)+" characters)")
	}
	r := KeyRevocation{Kid: uint16(n)}
	kr, err := s.keys.Load(ctx, s.Clock.Now())
	if err != nil {
		return r, err
	}
	k, ok := kr.Lookup(r.Kid)
	if !ok {
		return r, apperr.E(op, apperr.NotFound, CodeUnknownInspectionKey, "no inspection key "+kid+" is stored (`farebox keys list` shows the keys)")
	}
	succ, ok := kr.ActiveFor(k.Environment())
	if isFallbackSigner(kr, r.Kid) || !ok || succ.Environment() != k.Environment() {
		return r, apperr.E(op, apperr.Conflict, CodeInspectionKeyActive, "inspection key "+kid+
			" signs new tickets and has no successor signing yet (a key published ahead signs only from its time): run `farebox keys rotate"+
			envFlag(k.Environment())+" --publish-ahead 0` first, then revoke it")
	}
	r.Successor = succ.ID
	now := s.Clock.Now()
	err = s.DB.Write(ctx, func(q Queries) error {
		r.Resigned, r.AlreadyInFeed = 0, false
		ts, err := q.TicketsSignedWith(ctx, r.Kid, now)
		if err != nil {
			return err
		}
		if _, err := q.ResignTickets(ctx, r.Kid, succ.ID, now); err != nil {
			return err
		}
		r.FeedUntil = now.Add(KeyRevocationMinFeed)
		for _, t := range ts {
			if t.ValidUntil.After(r.FeedUntil) {
				r.FeedUntil = t.ValidUntil
			}
			if err := passes.Changed(ctx, q, s.Clock.Now(), now, now, t.ID); err != nil {
				return err
			}
		}
		r.Resigned = len(ts)
		if _, err := q.PruneRevocations(ctx, now); err != nil {
			return err
		}
		if r.AlreadyInFeed, err = q.KeyRevoked(ctx, r.Kid); err != nil || r.AlreadyInFeed {
			return err
		}
		_, err = q.AppendRevocation(ctx, ticketing.Revocation{Kind: ticketing.RevocationKey, KeyID: r.Kid, Reason: reason,
			RevokedAt: now, ValidUntil: r.FeedUntil})
		return err
	})
	if err != nil {
		return r, err
	}
	s.notify()
	r.Removed, err = s.keys.Remove(ctx, r.Kid)
	return r, err
}

func envFlag(env string) string {
	if env == barcode.EnvTest {
		return " --environment test"
	}
	return ""
}
