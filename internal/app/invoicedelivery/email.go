package invoicedelivery

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/smtpmail"
)

// Email is the e-mail transport: each document to its buyer's EM address
// through an SMTP submission relay, from the configured sender
// (--invoice-from). An electronic buyer gets the XRechnung file (UBL),
// any other buyer the PDF; the attachment holds the stored file, the
// download's bytes.
type Email struct {
	Relay *smtpmail.Relay
	From  mail.Address
}

// Channel is invoicing.ChannelEmail.
func (e *Email) Channel() string { return invoicing.ChannelEmail }

// Send builds the message of p and submits it. The Message-ID is the
// delivery's, so a message submitted twice (an attempt repeated after a
// lost lease) reads as one to the recipient's software.
func (e *Email) Send(ctx context.Context, p Parcel) (string, error) {
	reply, err := e.Relay.Send(ctx, e.Message(p))
	var se *smtpmail.Error
	if errors.As(err, &se) {
		return "", &Refusal{Reply: se.Error(), Temporary: se.Temporary}
	}
	return reply, err
}

// Message is the e-mail of p.
func (e *Email) Message(p Parcel) smtpmail.Message {
	inv, doc := p.Document, &p.Document.Document
	title := kindTitle(inv.Kind)
	subject := fmt.Sprintf("%s %s – %s", title, inv.Number, doc.Seller.Name)
	if inv.Environment == account.Test {
		subject = "TEST: " + subject
	}
	f, name, what := p.Files[formatPDF], inv.Number+".pdf", "als PDF"
	if inv.Electronic {
		f, name, what = p.Files[formatUBL], inv.Number+".xml", "als XRechnung (UBL)"
	}
	domain := e.From.Address[strings.LastIndexByte(e.From.Address, '@')+1:]
	return smtpmail.Message{From: e.From, To: mail.Address{Name: doc.Buyer.Name(), Address: p.Delivery.Recipient},
		Subject: subject, Date: p.At, MessageID: p.Delivery.ID + "@" + domain,
		Text:        body(doc, title, inv.Number, what, name),
		Attachments: []smtpmail.Attachment{{Name: name, ContentType: f.ContentType, Body: f.Body}}}
}

// body is the message text: German, then English.
func body(doc *invoicedoc.Document, title, number, what, file string) string {
	s := doc.Seller
	var b strings.Builder
	fmt.Fprintf(&b, "Guten Tag,\n\nanbei erhalten Sie die %s vom %s über %s %s (%s).\n\n",
		title+" "+number, invoicedoc.GermanDate(doc.IssueDate), doc.Totals().Payable.German(), what, file)
	fmt.Fprintf(&b, "Please find attached document %s of %s (%s).\n\n", number, doc.IssueDate.Format("2006-01-02"), file)
	fmt.Fprintf(&b, "Mit freundlichen Grüßen / Kind regards\n%s\n%s, %s, %s\n", s.Name, s.ContactName, s.ContactPhone, s.ContactEmail)
	return b.String()
}
