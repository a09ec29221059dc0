package passes

import (
	"strings"
	"time"

	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/ticketing"
)

// TicketDetails is a ticket with its coupon, product and area: what the
// application reads of a ticket (App.Ticket) and the wallets draw its
// barcode and passes from.
type TicketDetails struct {
	Ticket  ticketing.Ticket
	Coupon  ticketing.Coupon
	Product *catalog.Product
	Area    *catalog.AreaEntry
	// Valid is false for a ticket whose coupon was restored away or whose
	// subscription was restored (the new ticket replaces it).
	Valid bool
}

// TicketSummary is what the dashboard's ticket list shows of a ticket.
type TicketSummary struct {
	TicketID, CouponID    string
	ProductName           string // the product's local ticket name, "" without a product
	Valid                 bool   // not invalidated, not restored away
	ValidFrom, ValidUntil time.Time
}

// Summary is the dashboard's row of d.
func (d TicketDetails) Summary() TicketSummary {
	out := TicketSummary{TicketID: d.Ticket.ID, CouponID: d.Coupon.ID, Valid: d.Valid && d.Ticket.InvalidatedAt == nil,
		ValidFrom: d.Ticket.ValidFrom, ValidUntil: d.Ticket.ValidUntil}
	if d.Product != nil {
		out.ProductName = d.Product.LocalTicketName
	}
	return out
}

// Offer is what the wallets offer for a ticket: the ticket.properties
// entries carrying its signed barcode and the brand, its
// available_rendering_options, and the wallets withheld from it.
type Offer struct {
	Properties  map[string]any
	Options     []string
	Unavailable []UnavailableOption // nil when none
	// WindowSeconds is the time window of a dynamic ticket's barcode (its
	// product's inspection_profile is dynamic); 0 for static tickets.
	WindowSeconds int
}

// Offers gives the Offer of a ticket (wallets.Service.Offer of the
// instance; a nil service offers no barcode and no wallet).
type Offers func(TicketDetails) (Offer, error)

// UnavailableOption names a wallet a ticket offers no pass for although the
// service could build one, and why (ticket.ticket.meta.unavailable_rendering_options).
type UnavailableOption struct {
	Option  string `json:"option"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// RevokedReason is the reason shown for an invalid ticket.
func RevokedReason(t ticketing.Ticket) string {
	if t.RevokedReason != nil {
		return *t.RevokedReason
	}
	return ticketing.RevocationRestored + ": replaced by the ticket of a restored coupon"
}

// RevocationKind is the kind part of RevokedReason (ticketing.Revocation*).
func RevocationKind(t ticketing.Ticket) string {
	kind, _, _ := strings.Cut(RevokedReason(t), ": ")
	return kind
}
