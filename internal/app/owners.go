package app

import (
	"context"
	"crypto/subtle"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
)

// Capability is the kind of record whose id is the credential of a keyless
// request (decisions.md "Authentication"): the request is billed to the
// account owning the record. The route table says which one a route names.
type Capability int

const (
	CapabilityCoupon          Capability = iota + 1 // {coupon_id}
	CapabilityTicket                                // {ticket_id}
	CapabilityInvoiceDocument                       // {invoice_id} with its download {identifier}
)

// CapabilityOwner returns the account owning the record a keyless request
// names. found is false when there is no such record, or (for an invoice
// document) the identifier is not the invoice's: such a request names
// nobody's record and is billed to nobody, exactly as before the handler
// would have answered 404.
func (a *App) CapabilityOwner(ctx context.Context, c Capability, id, secret string) (o account.Owner, found bool, err error) {
	q := a.store.Read()
	switch c {
	case CapabilityCoupon:
		o, err = q.CouponOwner(ctx, id)
	case CapabilityTicket:
		o, err = q.TicketOwner(ctx, id)
	case CapabilityInvoiceDocument:
		var identifier string
		o, identifier, err = q.InvoiceOwner(ctx, id)
		if err == nil && subtle.ConstantTimeCompare([]byte(identifier), []byte(secret)) != 1 {
			return account.Owner{}, false, nil
		}
	default:
		return o, false, apperr.E("app.CapabilityOwner", apperr.Internal, CodeInternalError, "unknown capability")
	}
	if apperr.KindOf(err) == apperr.NotFound {
		return account.Owner{}, false, nil
	}
	return o, err == nil, err
}
