package invoicing

import (
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/invoicedoc"
)

// Transmission channels of a document to its buyer (docs/invoicing.md,
// "Delivery to the buyer"): the buyer's electronic address scheme
// (BT-49) decides which one carries it.
const (
	// ChannelEmail is e-mail: scheme EM, the address is the recipient.
	ChannelEmail = "email"
	// ChannelPeppol is the Peppol network through an access point: every
	// other scheme (a Leitweg-ID, 0204, above all); the recipient is the
	// participant id "<scheme>:<address>". farebox has no access point
	// yet: no transport serves the channel, so no delivery is written.
	ChannelPeppol = "peppol"
)

// SchemeEmail is the EAS code of an e-mail address.
const SchemeEmail = "EM"

// Route is the channel and recipient of a document for buyer b; ok is
// false for a buyer without electronic invoicing (the interface has no
// other address to send to) and a document without buyer.
func Route(b *invoicedoc.Buyer) (channel, recipient string, ok bool) {
	if b == nil || b.Electronic == nil {
		return "", "", false
	}
	e := b.Electronic
	if e.Scheme == SchemeEmail {
		return ChannelEmail, e.ElectronicAddress, true
	}
	return ChannelPeppol, e.Scheme + ":" + e.ElectronicAddress, true
}

// Delivery statuses.
const (
	DeliveryPending  = "pending"  // written with its document (or a resend), not attempted yet
	DeliveryDeferred = "deferred" // the last attempt met a temporary refusal (4xx, no connection): retried with backoff
	DeliverySent     = "sent"     // the relay accepted the message
	DeliveryFailed   = "failed"   // a permanent refusal (5xx, a relay that would see credentials in clear), or the retries ran out
)

// Final says whether status s ends a delivery (no attempt follows).
func Final(s string) bool { return s == DeliverySent || s == DeliveryFailed }

// Delivery is one transmission of a document to its buyer, with the log
// of its attempts. A document gets one when it is issued (in the issuing
// transaction) and one more with each resend.
type Delivery struct {
	ID          string
	InvoiceID   string
	AccountID   string
	Environment account.Environment
	Channel     string
	Recipient   string
	Status      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	Attempts    []DeliveryAttempt // oldest first
}

// DeliveryAttempt is one attempt of a delivery: its outcome (a delivery
// status other than pending) and the server's reply ("250 2.0.0 queued
// as …", "451 4.7.1 try later") or what kept the attempt from one.
type DeliveryAttempt struct {
	N       int
	At      time.Time
	Outcome string
	Reply   string
}

// JobDeliver is the job kind of a delivery's attempts; its payload is the
// delivery id.
const JobDeliver = "invoice.deliver"

// DeliverMaxAttempts bounds a delivery's attempts: with the runner's
// backoff (2 s doubling, capped at 10 minutes) the last falls about 75
// minutes after the first.
const DeliverMaxAttempts = 16

// NewDelivery is a pending delivery id of document inv to its buyer,
// written at at; ok is false when the buyer has no electronic address
// (Route).
func NewDelivery(id string, inv Invoice, at time.Time) (d Delivery, ok bool) {
	channel, recipient, ok := Route(inv.Document.Buyer)
	if !ok {
		return Delivery{}, false
	}
	return Delivery{ID: id, InvoiceID: inv.ID, AccountID: inv.AccountID, Environment: inv.Environment, Channel: channel,
		Recipient: recipient, Status: DeliveryPending, CreatedAt: at, UpdatedAt: at}, true
}
