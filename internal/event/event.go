// Package event is the catalogue of the events farebox writes when a
// record changes (docs/events.md): their types, the shape of a stored
// event and the rules of an event list (limit, cursor, filters). It holds
// no I/O: the store writes and reads events, app emits them in the
// transaction of the change.
package event

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/farebox/farebox/internal/account"
)

// Type is an event type, "<object>.<what happened>".
type Type string

// The catalogue. Adding a type means adding it here, in docs/events.md and
// in the Event.type enum of api/openapi.yaml (a test compares them).
const (
	OrderCreated                Type = "order.created"
	CouponActivated             Type = "coupon.activated"
	CouponTariffSettingsUpdated Type = "coupon.tariff_settings_updated"
	CouponRestored              Type = "coupon.restored"
	TicketIssued                Type = "ticket.issued"
	TicketDeviceMoveAllowed     Type = "ticket.device_move_allowed"
	TicketDeviceMoved           Type = "ticket.device_moved"
	SubscriptionCycleOrdered    Type = "subscription.cycle_ordered"
	SubscriptionReactivated     Type = "subscription.reactivated"
	SubscriptionCancelled       Type = "subscription.cancelled"
	SubscriptionEnded           Type = "subscription.ended"
	BillableItemUpdated         Type = "billable_item.updated"
	InvoiceCreated              Type = "invoice.created"
	InvoiceFilesReady           Type = "invoice.files_ready"
	InvoiceCancelled            Type = "invoice.cancelled"
	PaymentNoticeCreated        Type = "payment_notice.created"
	InvoiceSent                 Type = "invoice.sent"
	InvoiceDeliveryFailed       Type = "invoice.delivery_failed"
	CouponErased                Type = "coupon.erased"
	SubscriptionErased          Type = "subscription.erased"
	CustomerErased              Type = "customer.erased"
)

// Types is the whole catalogue in documentation order.
var Types = []Type{OrderCreated, CouponActivated, CouponTariffSettingsUpdated, CouponRestored, TicketIssued,
	TicketDeviceMoveAllowed, TicketDeviceMoved,
	SubscriptionCycleOrdered, SubscriptionReactivated, SubscriptionCancelled, SubscriptionEnded,
	BillableItemUpdated, InvoiceCreated, InvoiceFilesReady, InvoiceCancelled, PaymentNoticeCreated,
	InvoiceSent, InvoiceDeliveryFailed, CouponErased, SubscriptionErased, CustomerErased}

// Known says whether t is in the catalogue.
func Known(t Type) bool { return slices.Contains(Types, t) }

// APIVersion is the API version whose object shapes events carry: the
// objects are those the v9 GET endpoints return.
const APIVersion = "v9"

// Retention is how long an event is kept (and listable) after it was
// created; older events are pruned.
const Retention = 30 * 24 * time.Hour

// Event is one stored event. Seq numbers the events of an account and
// environment 1, 2, 3… in commit order without gaps: a consumer (the
// webhook sender) that has handled Seq n has handled everything before.
type Event struct {
	ID          string
	AccountID   string
	Environment account.Environment
	Seq         int64
	Type        Type
	ObjectID    string
	APIVersion  string
	CreatedAt   time.Time
	Object      json.RawMessage
}

// Limits of a list request.
const (
	DefaultLimit = 10
	MaxLimit     = 100
)

// Query selects a page of an account's events, newest first. The cursors
// (starting_after, ending_before) are not part of it: app resolves them to
// sequence numbers and passes those to store.Q.Events.
type Query struct {
	AccountID   string
	Environment account.Environment
	Limit       int
	Type        Type
	CreatedGTE  *time.Time
	CreatedLT   *time.Time
	// Settled, when set, bounds the page to events numbered up to it
	// (store.SettledEventSeq): none above it is shown, so none below it
	// can commit after the page was read.
	Settled *int64
}

// Page is a list answer: Events newest first; HasMore says whether more
// events lie beyond the page in the direction of the request (older for a
// first page or starting_after, newer for ending_before).
type Page struct {
	Events  []Event
	HasMore bool
}
