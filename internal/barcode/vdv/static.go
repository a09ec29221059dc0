package vdv

import (
	"errors"
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/barcode"
)

// Issue encodes c and signs it as a VDV-KA static barcode:
//
//	9E signature ‖ 9A remainder ‖ 7F21 organisation certificate ‖ 42 CAR
//
// The signature (ISO 9796-2, SHA-1, the organisation's 1024-bit key)
// recovers the first 106 bytes of the ticket data; the rest is the
// remainder. RSA signing is deterministic: a ticket always gives the same
// barcode. Test tickets and the development PKI write the test flag.
func Issue(c barcode.Claims, p Product, iss *Issuer, issuedAt time.Time) ([]byte, error) {
	data, err := EncodeTicket(c, p, iss, issuedAt)
	if err != nil {
		return nil, err
	}
	sig, rem, err := iss.sign(data)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 3+len(sig)+3+len(rem)+len(iss.Cert)+10)
	b = AppendTLV(b, TagTicketSignature, sig)
	b = AppendTLV(b, TagTicketRemainder, rem)
	b = append(b, iss.Cert...)
	return AppendTLV(b, TagCAReference, iss.Info.CAR[:]), nil
}

// Static is a VDV-KA static barcode split into its parts, unverified.
type Static struct {
	Signature, Remainder []byte
	Cert                 []byte // the 7F21 object
	CAR                  Ref
}

// IsBarcode reports whether b starts like a VDV-KA static barcode (a
// 128-byte signature object followed by a remainder).
func IsBarcode(b []byte) bool {
	_, err := Parse(b)
	return err == nil
}

// Parse splits a barcode into its four objects.
func Parse(b []byte) (Static, error) {
	var s Static
	var err error
	if s.Signature, b, err = ReadTagged(b, TagTicketSignature); err != nil {
		return s, err
	}
	if s.Remainder, b, err = ReadTagged(b, TagTicketRemainder); err != nil {
		return s, err
	}
	certStart := b
	if _, b, err = ReadTagged(b, TagCertificate); err != nil {
		return s, err
	}
	s.Cert = certStart[:len(certStart)-len(b)]
	car, b, err := ReadTagged(b, TagCAReference)
	if err != nil {
		return s, err
	}
	if len(car) != len(s.CAR) {
		return s, fmt.Errorf("%w: CA reference of %d bytes", ErrTLV, len(car))
	}
	copy(s.CAR[:], car)
	if len(b) != 0 {
		return s, fmt.Errorf("%w: %d bytes after the CA reference", ErrTLV, len(b))
	}
	return s, nil
}

// Verified is a barcode whose chain and signature verified.
type Verified struct {
	Ticket
	Holder      Cert // the organisation certificate
	CA          Cert
	Development bool // signed under farebox's development root
}

// Verify checks the chain (the CA named by the barcode's CAR must be
// trusted; the organisation certificate must verify under it and name it;
// neither may have expired at now) and the ticket signature, and decodes
// the ticket.
func Verify(b []byte, trust *Trust, now time.Time) (Verified, error) {
	s, err := Parse(b)
	if err != nil {
		return Verified{}, fmt.Errorf("malformed: %w", err)
	}
	var ca trustedCert
	if trust != nil {
		ca = trust.cas[s.CAR]
	}
	if ca.Key == nil {
		return Verified{}, fmt.Errorf("%w: the CA %s is not trusted", ErrUntrusted, s.CAR)
	}
	holder, signed, _, err := ReadCert(s.Cert, ca.Key)
	if err == nil && !signed {
		err = errors.New("the barcode's certificate is unsigned")
	}
	if err != nil {
		return Verified{}, fmt.Errorf("%w: organisation certificate: %v", ErrUntrusted, err)
	}
	if holder.CAR != s.CAR {
		return Verified{}, fmt.Errorf("%w: the certificate names %s, the barcode %s", ErrUntrusted, holder.CAR, s.CAR)
	}
	if ca.Expired(now) || holder.Expired(now) {
		return Verified{}, fmt.Errorf("%w: certificate expired (CA %s, organisation %s)", ErrUntrusted,
			ca.Expires.Format(time.DateOnly), holder.Expires.Format(time.DateOnly))
	}
	if holder.Key.N.BitLen() != 1024 {
		return Verified{}, fmt.Errorf("%w: the organisation key has %d bits, not 1024", ErrUntrusted, holder.Key.N.BitLen())
	}
	data, err := Recover9796(holder.Key, Hash, s.Signature, s.Remainder)
	if err != nil {
		return Verified{}, err
	}
	t, err := DecodeTicket(data)
	if err != nil {
		return Verified{}, err
	}
	return Verified{Ticket: t, Holder: holder, CA: ca.Cert, Development: ca.dev}, nil
}

// ErrUntrusted reports a barcode whose certificate chain does not lead to
// a configured root.
var ErrUntrusted = errors.New("VDV certificate chain not trusted")

// Inspect verifies a VDV-KA static barcode against trust and judges it at
// now, in the Report `farebox inspect` prints for every profile.
func Inspect(b []byte, trust *Trust, now time.Time) barcode.Report {
	notGenuine := func(reason string) barcode.Report {
		return barcode.Report{Reason: reason, State: barcode.StateNotGenuine, At: now}
	}
	v, err := Verify(b, trust, now)
	switch {
	case errors.Is(err, ErrSignature):
		return notGenuine("its signature does not verify (forged or altered)")
	case err != nil:
		return notGenuine("VDV-KA barcode: " + err.Error())
	}
	if v.Development && !v.Test() {
		return notGenuine("the development PKI signed a ticket that is not marked as test")
	}
	dev := ""
	if v.Development {
		dev = " (farebox DEVELOPMENT PKI, not the VDV's)"
	}
	signer := fmt.Sprintf("VDV-KA static barcode %X.%X.%02X, organisation %d, certificate %s by CA %s%s",
		v.Version[0]>>4, v.Version[0]&0x0F, v.Version[1], v.Org, v.Holder.CHR, v.CA.CHR, dev)
	price := ""
	if v.PriceCents > 0 {
		price = fmt.Sprintf("Price:       %d.%02d EUR (VAT %d.%02d %%)\n", v.PriceCents/100, v.PriceCents%100, v.VATBP/100, v.VATBP%100)
	}
	id := v.TicketID
	if id == "" {
		id = "(none)"
	}
	extra := fmt.Sprintf("Number:      %d (product organisation %d, product %d)\nArea:        %s\nIssued:      %s\n%s",
		v.Number, v.ProductOrg, v.ProductNumber, v.Area, v.IssuedAt.Format(time.RFC3339), price)
	c := v.Claims
	c.TicketID = id
	return barcode.Report{Genuine: true, Claims: c, State: barcode.ValidityState(v.Claims, now), Test: v.Test(),
		At: now, Signer: signer, Extra: extra}
}
