// Package devices is the device-binding capability of dynamic tickets
// (issue 32, docs/barcodes.md "Dynamic barcodes"): the rendering engine
// binds a ticket of a product with inspection_profile dynamic to the
// public key it made in the device (Bind, keyless: the ticket id is the
// credential, as for every call the engine and the SDKs make), and gets
// back the ticket's payload signed with that key, which it signs every
// time window. One device at a time: another device is refused until the
// partner allows a move (AllowMove, rate-limited, written as the event
// ticket.device_move_allowed; the move itself as ticket.device_moved).
package devices

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/engines"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/ticketing"
)

// Queries are the store methods the device binding uses.
type Queries interface {
	DeviceBinding(ctx context.Context, ticketID string) (ticketing.DeviceBinding, error)
	BindDevice(ctx context.Context, ticketID, key string, at time.Time) (string, error)
	AllowDeviceMove(ctx context.Context, ticketID string, at, notBefore time.Time) (bool, error)
	AppendDeviceMove(ctx context.Context, m ticketing.DeviceMove) (int64, error)
}

// DB is the database as the device binding sees it (store.View).
type DB = kit.DB[Queries]

// TicketFunc reads a ticket with its product (App.Ticket).
type TicketFunc func(ctx context.Context, id string) (passes.TicketDetails, error)

// Events writes the events of one change in its transaction q (the
// application's event writer, app.EventWriter).
type Events func(ctx context.Context, q Queries, evs []event.Event) error

// DefaultMoveInterval is the least time between two moves a partner
// allows for one ticket.
const DefaultMoveInterval = 24 * time.Hour

// Options configure New.
type Options struct {
	Ticket TicketFunc
	// Offers signs a ticket's barcode (wallets.Service.Offer): the bound
	// ticket's payload carries the device key.
	Offers passes.Offers
	Events Events
	// MoveInterval rate-limits AllowMove per ticket (DefaultMoveInterval
	// when zero).
	MoveInterval time.Duration
}

// Service binds dynamic tickets to devices.
type Service struct {
	kit.Base[DB]
	o Options
}

// New returns the service over db; c is the service clock (nil: the
// system clock), ids the id prefix of the events it writes.
func New(db DB, c clock.Clock, ids ident.Prefix, o Options) *Service {
	if o.MoveInterval <= 0 {
		o.MoveInterval = DefaultMoveInterval
	}
	return &Service{Base: kit.NewBase(db, c, ids), o: o}
}

// BindingJSON is a ticket's device binding as the API shows it (the
// DeviceBinding schema; the object of the ticket.device_* events).
type BindingJSON struct {
	Object        string         `json:"object"` // "device_binding"
	TicketID      string         `json:"ticket_id"`
	Bound         bool           `json:"bound"`
	BoundAt       *kit.Timestamp `json:"bound_at"`
	Moves         int            `json:"moves"`
	MoveAllowedAt *kit.Timestamp `json:"move_allowed_at"`
	// Outcome is what this call did: bound, unchanged, moved (Bind only).
	Outcome string `json:"outcome,omitempty"`
	// WindowSeconds and InspectionBarcode: the payload the device signs
	// every window (Bind only).
	WindowSeconds     int          `json:"window_seconds,omitempty"`
	InspectionBarcode *BarcodeJSON `json:"inspection_barcode,omitempty"`
}

// BarcodeJSON is the signed payload of a bound ticket, as
// ticket.properties.inspection_barcode shows it.
type BarcodeJSON struct {
	Format   string `json:"format"`   // "aztec"
	Encoding string `json:"encoding"` // "base64url"
	Payload  string `json:"payload"`
}

func view(b ticketing.DeviceBinding) BindingJSON {
	return BindingJSON{Object: "device_binding", TicketID: b.TicketID, Bound: b.Key != "", BoundAt: kit.TimestampPtr(b.BoundAt),
		Moves: b.Moves, MoveAllowedAt: kit.TimestampPtr(b.MoveAllowedAt)}
}

// BindRequest is the engine's request: the device's public key.
type BindRequest struct {
	PublicKey string `json:"public_key"` // base64url (no padding) of the uncompressed P-256 point
}

// ParseKey checks a device key: base64url of an uncompressed P-256 point
// on the curve. It returns the canonical text (unpadded base64url).
func ParseKey(s string) (string, error) {
	const op = "devices.ParseKey"
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		_, err = ecdh.P256().NewPublicKey(b)
	}
	if err != nil || len(b) != 65 {
		msg := "public_key must be the device's ECDSA P-256 public key: the uncompressed point (65 bytes) in base64url"
		return "", apperr.E(op, apperr.Invalid, CodeInvalidDeviceKey, msg).WithDetails(apperr.FieldError{Field: "/public_key", Message: msg})
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Bind binds ticket id to the device key of r (docs/barcodes.md): the
// first key binds, the same key again changes nothing, another key only
// moves the ticket when the partner allowed it. It answers the binding
// and the ticket's payload signed with the key.
func (s *Service) Bind(ctx context.Context, claim idempotency.Claim, id string, r BindRequest) (BindingJSON, error) {
	const op = "devices.Bind"
	key, err := ParseKey(r.PublicKey)
	if err != nil {
		return BindingJSON{}, err
	}
	d, err := s.o.Ticket(ctx, id)
	if err != nil {
		return BindingJSON{}, err
	}
	if !d.Product.Dynamic() {
		return BindingJSON{}, apperr.E(op, apperr.Conflict, CodeTicketNotDynamic, "the ticket's product has inspection_profile static: its barcode needs no device")
	}
	now := s.Clock.Now()
	if !d.Valid || d.Ticket.InvalidatedAt != nil || now.After(d.Ticket.ValidUntil) {
		return BindingJSON{}, apperr.E(op, apperr.Conflict, CodeTicketNotValid, "the ticket is no longer valid (revoked, replaced by a restored ticket, or ended): it binds no device")
	}
	var out BindingJSON
	err = s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		before, err := q.DeviceBinding(ctx, id)
		if err != nil {
			return err
		}
		outcome, err := q.BindDevice(ctx, id, key, now)
		if err != nil {
			return err
		}
		if outcome == ticketing.BindRefused {
			return apperr.E(op, apperr.Conflict, CodeDeviceBindingConflict,
				"the ticket is bound to another device; the partner can allow a move (POST …/tickets/{ticket_id}/device_move.json)")
		}
		b, err := q.DeviceBinding(ctx, id)
		if err != nil {
			return err
		}
		out = view(b)
		out.Outcome = outcome
		if outcome != ticketing.BindMoved {
			return nil
		}
		// The old phone keeps a payload signed for its key: the blocklist
		// publishes the key so offline inspectors refuse it.
		if _, err := q.AppendDeviceMove(ctx, ticketing.DeviceMove{TicketID: id, Key: before.Key, MovedAt: now, ValidUntil: d.Ticket.ValidUntil}); err != nil {
			return err
		}
		return s.event(ctx, q, d, event.TicketDeviceMoved, out, now)
	})
	if err != nil {
		return BindingJSON{}, err
	}
	d.Ticket.DeviceKey = key
	return s.signed(d, out)
}

// signed adds the payload of bound ticket d to out.
func (s *Service) signed(d passes.TicketDetails, out BindingJSON) (BindingJSON, error) {
	o, err := s.o.Offers(d)
	if err != nil {
		return BindingJSON{}, err
	}
	bc, ok := o.Properties[engines.PropBarcode].(engines.BarcodeProperty)
	if !ok {
		return BindingJSON{}, apperr.E("devices.Bind", apperr.Unavailable, CodeDeviceNotBound, "the service has no inspection keys: no barcode to bind")
	}
	out.InspectionBarcode = &BarcodeJSON{Format: bc.Format, Encoding: bc.Encoding, Payload: bc.Payload}
	out.WindowSeconds = o.WindowSeconds
	return out, nil
}

// Binding is ticket id's device binding for its partner p.
func (s *Service) Binding(ctx context.Context, p account.Principal, id string) (BindingJSON, error) {
	if _, err := s.owned(ctx, p, id); err != nil {
		return BindingJSON{}, err
	}
	b, err := s.DB.Read().DeviceBinding(ctx, id)
	return view(b), err
}

// owned reads ticket id if it belongs to p (else not found, as any other
// tenant's record).
func (s *Service) owned(ctx context.Context, p account.Principal, id string) (passes.TicketDetails, error) {
	d, err := s.o.Ticket(ctx, id)
	if err != nil {
		return d, err
	}
	if d.Ticket.AccountID != p.AccountID || string(d.Ticket.Environment) != string(p.Environment) {
		return passes.TicketDetails{}, apperr.NotFoundf("devices.owned", CodeTicketNotFound)
	}
	return d, nil
}

// AllowMove lets bound ticket id move to another device once (the next
// Bind with a new key), for partner p; at most once per MoveInterval.
func (s *Service) AllowMove(ctx context.Context, claim idempotency.Claim, p account.Principal, id string) (BindingJSON, error) {
	const op = "devices.AllowMove"
	d, err := s.owned(ctx, p, id)
	if err != nil {
		return BindingJSON{}, err
	}
	if !d.Product.Dynamic() {
		return BindingJSON{}, apperr.E(op, apperr.Conflict, CodeTicketNotDynamic, "the ticket's product has inspection_profile static: it is bound to no device")
	}
	now := s.Clock.Now()
	var out BindingJSON
	err = s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		ok, err := q.AllowDeviceMove(ctx, id, now, now.Add(-s.o.MoveInterval))
		if err != nil {
			return err
		}
		b, err := q.DeviceBinding(ctx, id)
		if err != nil {
			return err
		}
		if !ok && b.Key == "" {
			return apperr.E(op, apperr.Conflict, CodeDeviceNotBound, "the ticket is bound to no device yet: its first device binds without permission")
		}
		if !ok {
			next := b.MoveLastAllowedAt.Add(s.o.MoveInterval)
			return apperr.E(op, apperr.RateLimited, CodeDeviceMoveTooSoon,
				fmt.Sprintf("a move of this ticket was allowed at %s; the next one can be allowed from %s", b.MoveLastAllowedAt.Format(time.RFC3339), next.Format(time.RFC3339)))
		}
		out = view(b)
		return s.event(ctx, q, d, event.TicketDeviceMoveAllowed, out, now)
	})
	return out, err
}

func (s *Service) event(ctx context.Context, q Queries, d passes.TicketDetails, t event.Type, obj BindingJSON, at time.Time) error {
	raw, err := json.Marshal(obj)
	if err != nil {
		return apperr.Wrap("devices.event", err)
	}
	return s.o.Events(ctx, q, []event.Event{{ID: s.IDs.New("event"), AccountID: d.Ticket.AccountID, Environment: d.Ticket.Environment,
		Type: t, ObjectID: d.Ticket.ID, APIVersion: event.APIVersion, CreatedAt: at, Object: raw}})
}
