// Package ticketing holds the records of the ticketing flow: orders with
// their coupons, billable items, subscriptions with their cycles, and
// tickets. The rules of when a ticket is valid live in package validity,
// the calendar of subscription cycles in package subscription; package app
// combines them in use cases and package store persists these types.
package ticketing

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/money"
)

// Order is what a partner ordered in one request.
type Order struct {
	ID                     string
	AccountID              string
	Environment            account.Environment
	OptionalOrderReference *string
	RestoreSecret          string
	CreatedAt              time.Time
	Coupons                []Coupon
	// TestClockID names the test clock the order was created on (test
	// environment only; docs/test-clocks.md): the order and everything made
	// from it live at that clock's time. Nil for the service's time.
	TestClockID *string
}

// Coupon is a ticket not yet activated (or the coupon a ticket came from).
type Coupon struct {
	ID               string
	OrderID          string
	Position         int
	AccountID        string
	Environment      account.Environment
	ProductID        string
	SubscriptionID   *string
	BillableItemID   *string
	OriginalCouponID *string
	RestoredCouponID *string
	TariffSettings   json.RawMessage // nil when none were given
	Activated        bool
	CreatedAt        time.Time // the order time
	TestClockID      *string   // the order's test clock
}

// BillableItem is one billable unit: a single ticket or an ordered cycle.
type BillableItem struct {
	ID             string
	AccountID      string
	Environment    account.Environment
	ProductID      string
	Description    string
	AmountCents    money.Cents
	Currency       string
	VATRateBP      int64
	CouponID       *string
	SubscriptionID *string
	CycleID        *string
	OrderedAt      time.Time
	TestClockID    *string // the order's test clock
}

// Subscription is a monthly (or otherwise cyclic) product ordered once.
type Subscription struct {
	ID                     string
	AccountID              string
	Environment            account.Environment
	ProductID              string
	OriginalSubscriptionID *string
	RestoredSubscriptionID *string
	CancelRequestedAt      *time.Time
	EndsAt                 *time.Time // set by cancellation: no cycle starts at or after it
	CreatedAt              time.Time
	TestClockID            *string // the order's test clock
	Cycles                 []Cycle // chronological
}

// Cycle is one period of a subscription. ValidFrom and ValidUntil (the
// inclusive last second) are zero while the cycle is undated: the first cycle
// gets its month at the first activation.
type Cycle struct {
	ID              string
	SubscriptionID  string
	ProductID       string
	ValidFrom       time.Time
	ValidUntil      time.Time
	Ordered         bool
	CouponActivated bool
	BillableItemID  *string
	TicketID        *string
	CreatedAt       time.Time
}

// Ticket is an activated coupon (or one subscription cycle of it).
type Ticket struct {
	ID                   string
	CouponID             string
	AccountID            string
	Environment          account.Environment
	ProductID            string
	CycleID              string // "" for non-subscription tickets
	IdentificationMedium json.RawMessage
	MediumHash           string
	TariffSettings       json.RawMessage
	ValidFrom            time.Time
	ValidUntil           time.Time
	ReactivationKey      *string // key for the following cycle
	UsedReactivationKey  *string // the key this ticket was issued for
	InvalidatedAt        *time.Time
	// RevokedReason says why a ticket stopped being valid before its end
	// (set with InvalidatedAt; nil for tickets invalidated before the
	// revocation feed existed).
	RevokedReason *string
	CreatedAt     time.Time
	// InspectionKeyID is the inspection key that signs the ticket's
	// barcode (docs/wallet.md, "Key rotation"); 0 means the key active when
	// the ticket is read (tickets issued since the last rotation).
	InspectionKeyID uint16
	// VDVNumber is the ticket's VDV-KA ticket number (Berechtigungsnummer;
	// docs/barcodes.md), taken from the issuer's counter when a ticket of a
	// vdv-ka-static product is issued; 0 for one issued without (its
	// barcode carries vdv.TicketNumber of its id).
	VDVNumber uint32
	// DeviceKey is the device a ticket of a dynamic product is bound to
	// (docs/barcodes.md, "Dynamic barcodes"): its ECDSA P-256 public key as
	// the uncompressed point in base64url; "" while unbound.
	DeviceKey string
}

// DeviceBinding is the device state of a ticket (store.Q.DeviceBinding).
type DeviceBinding struct {
	TicketID          string
	Key               string     // Ticket.DeviceKey; "" unbound
	BoundAt           *time.Time // when Key was bound
	Moves             int        // moves to another device so far
	MoveAllowedAt     *time.Time // a move the partner allowed and no device has made yet
	MoveLastAllowedAt *time.Time // the partner's last permission (rate limit)
}

// DeviceMove is a key a dynamic ticket moved away from: the old phone
// still holds a payload signed for it, so the blocklist publishes it
// (docs/blocklist.md "Moved-away phones"). Seq is its number in the
// revocation feed's numbering.
type DeviceMove struct {
	Seq        int64
	TicketID   string
	Key        string // the moved-away key (base64url of the P-256 point)
	MovedAt    time.Time
	ValidUntil time.Time // the ticket's end; the entry is pruned after it
}

// Outcomes of binding a device key to a ticket (store.Q.BindDevice).
const (
	BindFirst   = "bound"     // the ticket had no device
	BindSame    = "unchanged" // the ticket is bound to this key already
	BindMoved   = "moved"     // the partner allowed a move; the ticket now has this key
	BindRefused = "refused"   // bound to another device, no move allowed
)

// Revocation kinds: why a ticket entered the revocation feed.
const (
	RevocationRestored = "restored" // its coupon was restored into a new one
	RevocationRevoked  = "revoked"  // the operator revoked it (farebox tickets revoke)
	RevocationErased   = "erased"   // its personal data was erased on request (docs/privacy.md)
	// RevocationKey: an inspection signing key was revoked (farebox keys
	// revoke); every barcode it signed is invalid. The entry names the key
	// (KeyID), not a ticket.
	RevocationKey = "key"
)

// KeyUse is how many still-valid tickets an inspection key signs and when
// the last of them ends.
type KeyUse struct {
	Tickets        int
	LastValidUntil time.Time
}

// Revocation is one entry of the revocation feed: a ticket that stopped
// being valid before ValidUntil. Seq numbers entries in commit order.
type Revocation struct {
	Seq        int64
	TicketID   string // "" for a key entry
	KeyID      uint16 // the revoked key of a RevocationKey entry
	Kind       string
	Reason     string
	RevokedAt  time.Time
	ValidUntil time.Time
}

// OrderFilter selects the orders of a list (docs/lists.md).
type OrderFilter struct {
	list.Query
	// OptionalOrderReference, when set, keeps the orders with exactly
	// that reference.
	OptionalOrderReference *string
}

// SubscriptionState is a subscription's state in lists (docs/lists.md).
type SubscriptionState string

// The states of a subscription: active (not cancelled), cancelled (its end
// is set and still ahead), ended (its end has passed), restored (replaced
// by a restore; the replacement carries on).
const (
	SubscriptionActive    SubscriptionState = "active"
	SubscriptionCancelled SubscriptionState = "cancelled"
	SubscriptionEnded     SubscriptionState = "ended"
	SubscriptionRestored  SubscriptionState = "restored"
)

// SubscriptionStates are the states, in the order docs/lists.md names them.
var SubscriptionStates = []SubscriptionState{SubscriptionActive, SubscriptionCancelled, SubscriptionEnded, SubscriptionRestored}

// SubscriptionFilter selects the subscriptions of a list.
type SubscriptionFilter struct {
	list.Query
	// State, when set, keeps the subscriptions in that state at Now.
	State SubscriptionState
	Now   time.Time
	// EndsGTE and EndsLT bound ends_at when set (a subscription without
	// an end is then left out).
	EndsGTE, EndsLT *time.Time
}

// CouponState is a coupon's state in lists (docs/lists.md).
type CouponState string

// The states of a coupon: not_activated, activated (its first activation
// is done), restored (replaced by a restore; the replacement is listed on
// its own).
const (
	CouponNotActivated CouponState = "not_activated"
	CouponActivated    CouponState = "activated"
	CouponRestored     CouponState = "restored"
)

// CouponStates are the states, in the order docs/lists.md names them.
var CouponStates = []CouponState{CouponNotActivated, CouponActivated, CouponRestored}

// CouponFilter selects the coupons of a list.
type CouponFilter struct {
	list.Query
	// State, when set, keeps the coupons in that state.
	State CouponState
}

// TicketState is a ticket's state in lists (docs/lists.md): valid, or
// invalidated (revoked or replaced; GET shows "valid": false).
type TicketState string

// The states of a ticket.
const (
	TicketValid       TicketState = "valid"
	TicketInvalidated TicketState = "invalidated"
)

// TicketStates are the states, in the order docs/lists.md names them.
var TicketStates = []TicketState{TicketValid, TicketInvalidated}

// TicketFilter selects the tickets of a list.
type TicketFilter struct {
	list.Query
	// State, when set, keeps the tickets in that state.
	State TicketState
}

// Test clock statuses (docs/test-clocks.md).
const (
	TestClockReady     = "ready"     // standing at FrozenTime, its time-driven work done
	TestClockAdvancing = "advancing" // moved to FrozenTime; the work up to it is running
)

// TestClock is a clock of an account's test environment: the objects
// created on it see FrozenTime as the current time.
type TestClock struct {
	ID          string
	AccountID   string
	Environment account.Environment
	Name        *string
	FrozenTime  time.Time
	Status      string
	CreatedAt   time.Time
}

// JobTestClockAdvance is the job kind that runs a clock's time-driven
// work after an advance; its payload is AdvancePayload's. The test clock
// use cases enqueue it, the time-driven work of the other capabilities
// handles it.
const JobTestClockAdvance = "test_clock.advance"

// AdvancePayload is the JobTestClockAdvance payload: the clock's id and
// the time it was advanced from (the start of the advance's span).
func AdvancePayload(id string, from time.Time) string {
	return id + " " + from.UTC().Format(time.RFC3339Nano)
}

// ParseAdvancePayload reads AdvancePayload; a payload of only the id (a
// job queued before the span was recorded) spans everything before the
// clock's time.
func ParseAdvancePayload(p string) (id string, from time.Time) {
	id, ts, ok := strings.Cut(p, " ")
	if ok {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			return id, t
		}
	}
	return id, time.Time{}
}

// TestClockFilter selects the clocks of a list.
type TestClockFilter struct {
	list.Query
}

// RevokedTicket is a revocation feed entry with what the exported
// blocklists need of its ticket (docs/blocklist.md): the VDV ticket
// number it stores (0: none) and its product's barcode profile ("" for a
// key entry or a ticket whose product is gone).
type RevokedTicket struct {
	Revocation
	VDVNumber uint32
	Barcode   string
}

// Blocklist entry schemes (docs/blocklist.md).
const (
	BlockVDV = "vdv"
	BlockUIC = "uic"
)

// BlockEntry is an imported blocklist entry that names this service's
// issuer: Scheme BlockVDV (Issuer the organisation, Number the
// Berechtigungsnummer in decimal) or BlockUIC (Issuer the RICS code,
// Number the U_HEAD ticket number).
type BlockEntry struct {
	Source     string
	Scheme     string
	Issuer     int
	Number     string
	Target     string
	Reason     string
	ValidUntil time.Time
	TicketID   string // the farebox ticket it voided, "" none
}
