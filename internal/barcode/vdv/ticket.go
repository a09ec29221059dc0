package vdv

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
)

// Product is what the catalog adds to a ticket's claims for this profile.
type Product struct {
	Number     int    // product number of the product organisation (9999: Deutschlandticket), 1..65535
	Area       string // where the ticket is valid, e.g. "Deutschland"
	PriceCents int64  // price written into the basic data (0 = none)
	VATBP      int    // VAT rate in basis points (0.01 % steps, as the VDV writes it)
	// TicketNumber is the ticket's Berechtigungsnummer from the issuer's
	// counter (unique per issuer); 0 = TicketNumber(ticket id), the
	// hash-derived number of tickets issued without one.
	TicketNumber uint32
}

// Ticket is what a VDV-KA static barcode says about one ticket.
type Ticket struct {
	barcode.Claims        // TicketID is farebox's id (farebox's product transaction data)
	Number         uint32 // Berechtigungsnummer (ticket number)
	Org            int    // the ticket's organisation (KVP)
	ProductNumber  int
	ProductOrg     int
	Area           string
	PriceCents     int64
	VATBP          int
	IssuedAt       time.Time // transaction time
	TerminalType   int
	SAMSeq1        uint32
	SAMSeq2        uint32
	SAMID          int
	Version        [2]byte // trailer version after "VDV"
}

// Fixed parts of the ticket data (the message the signature recovers).
const (
	headerLen      = 18 // number 4, organisation 2, product 2, product organisation 2, begin 4, end 4
	commonTxLen    = 17
	issueDataLen   = 12
	trailerLen     = 5
	minTicketLen   = 111 // the data is zero-padded before the trailer up to this length
	tagBasicData   = 0xDA
	tagTraveller   = 0xDB
	terminalHandy  = 16  // "HandyTicketserver"
	locationServer = 215 // "Ticketserver"
	// farebox's elements inside the product transaction data (8A), in the
	// context-specific range: ticket id, area text, flags (bit 0: test).
	tagFareboxTicketID = 0xC1
	tagFareboxArea     = 0xC2
	tagFareboxFlags    = 0xC3
	maxNamePart        = 30 // bytes of a first or last name written (longer ones are cut)
)

// TrailerVersion is the VDV-KA version farebox writes after "VDV".
var TrailerVersion = [2]byte{0x13, 0x01}

var latin9 = encoding.ReplaceUnsupported(charmap.ISO8859_15.NewEncoder())

func claimsErr(msg string) error {
	return apperr.E("vdv.Issue", apperr.Invalid, barcode.CodeInvalidBarcodeClaims, msg)
}

// TicketNumber is the 32-bit ticket number derived from farebox's ticket
// id (the first four bytes of its SHA-256): stable, so every rendering of
// a ticket is the same barcode. It is the number of tickets issued without
// one from the issuer's counter (Product.TicketNumber): 32 bits of a hash
// collide (about 170 pairs per 1.2 million tickets).
func TicketNumber(ticketID string) uint32 {
	h := sha256.Sum256([]byte(ticketID))
	return binary.BigEndian.Uint32(h[:4])
}

// appendDateTime writes the VDV compact date-time of t in Berlin time:
// year-1990 (7 bits), month (4), day (5), hour (5), minute (6), second/2 (5).
func appendDateTime(b []byte, t time.Time) ([]byte, error) {
	l := t.In(berlin)
	if l.Year() < 1990 || l.Year() > 1990+127 {
		return nil, fmt.Errorf("%d is outside the VDV years 1990..2117", l.Year())
	}
	v := uint32(l.Year()-1990)<<25 | uint32(l.Month())<<21 | uint32(l.Day())<<16 |
		uint32(l.Hour())<<11 | uint32(l.Minute())<<5 | uint32(l.Second()/2)
	return binary.BigEndian.AppendUint32(b, v), nil
}

func dateTime(b []byte) (time.Time, error) {
	v := binary.BigEndian.Uint32(b)
	y, mo, d := int(v>>25)+1990, int(v>>21&0x0F), int(v>>16&0x1F)
	h, mi, s := int(v>>11&0x1F), int(v>>5&0x3F), int(v&0x1F)*2
	t := time.Date(y, time.Month(mo), d, h, mi, s, 0, berlin)
	if mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59 || t.Day() != d {
		return time.Time{}, fmt.Errorf("% X is not a VDV date-time", b[:4])
	}
	return t, nil
}

func cutUTF8(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// EncodeTicket writes the ticket data (the signed message) for c.
func EncodeTicket(c barcode.Claims, p Product, iss *Issuer, issuedAt time.Time) ([]byte, error) {
	if c.TicketID == "" || c.ValidUntil.Before(c.ValidFrom) {
		return nil, claimsErr("a ticket id and valid_from <= valid_until are required")
	}
	if c.Environment != barcode.EnvLive && c.Environment != barcode.EnvTest {
		return nil, claimsErr("environment must be live or test")
	}
	if p.Number < 1 || p.Number > 65535 {
		return nil, claimsErr("a VDV barcode needs the catalog's barcode_product_number (1..65535)")
	}
	if p.PriceCents < 0 || p.PriceCents > 0xFFFFFF || p.VATBP < 0 || p.VATBP > 0xFFFF {
		return nil, claimsErr("price must be 0..167772.15 EUR and VAT 0..655.35 % for a VDV barcode")
	}
	if len(c.TicketID) > 127 || len(p.Area) > 127 {
		return nil, claimsErr("ticket id and area must be at most 127 bytes for a VDV barcode")
	}
	var err error
	n := p.TicketNumber
	if n == 0 {
		n = TicketNumber(c.TicketID)
	}
	b := make([]byte, 0, 256)
	b = binary.BigEndian.AppendUint32(b, n)
	b = binary.BigEndian.AppendUint16(b, uint16(iss.Org))
	b = binary.BigEndian.AppendUint16(b, uint16(p.Number))
	b = binary.BigEndian.AppendUint16(b, uint16(iss.ProductOrg))
	// Whole even seconds; the end is rounded down (never later than the ticket).
	if b, err = appendDateTime(b, c.ValidFrom); err != nil {
		return nil, claimsErr("valid_from: " + err.Error())
	}
	if b, err = appendDateTime(b, c.ValidUntil); err != nil {
		return nil, claimsErr("valid_until: " + err.Error())
	}

	basic := []byte{0, 1, 0, 0, 0, 0, 0, 2} // payment type, adult, no companions, category, 2nd class
	basic = append(basic, byte(p.PriceCents>>16), byte(p.PriceCents>>8), byte(p.PriceCents))
	basic = binary.BigEndian.AppendUint16(basic, uint16(p.VATBP))
	basic = append(basic, 0, byte(p.Number>>16), byte(p.Number>>8), byte(p.Number))
	trav := []byte{0} // gender not stated
	if c.BirthDate != "" {
		bd, err := time.Parse(time.DateOnly, c.BirthDate)
		if err != nil {
			return nil, claimsErr("birth_date must be a date YYYY-MM-DD")
		}
		trav = appendBCDDate(trav, bd)
	} else {
		trav = append(trav, 0, 0, 0, 0)
	}
	name := cutUTF8(c.FirstName, maxNamePart) + "#" + cutUTF8(c.LastName, maxNamePart)
	if c.FirstName == "" && c.LastName == "" {
		name = ""
	}
	enc, err := latin9.Bytes([]byte(name))
	if err != nil {
		return nil, claimsErr("name: " + err.Error())
	}
	trav = append(trav, enc...)
	prod := AppendTLV(AppendTLV(nil, tagBasicData, basic), tagTraveller, trav)
	b = AppendTLV(b, TagProductData, prod)

	b = binary.BigEndian.AppendUint16(b, uint16(iss.Org))
	b = append(b, terminalHandy)
	b = binary.BigEndian.AppendUint16(b, 1)
	b = binary.BigEndian.AppendUint16(b, uint16(iss.Org))
	if b, err = appendDateTime(b, issuedAt); err != nil {
		return nil, claimsErr("issuing time: " + err.Error())
	}
	b = append(b, locationServer, 0, 0, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(iss.Org))

	var flags byte
	if c.Test() || iss.Development {
		flags = 1
	}
	fb := AppendTLV(nil, tagFareboxTicketID, []byte(c.TicketID))
	if p.Area != "" {
		fb = AppendTLV(fb, tagFareboxArea, []byte(p.Area))
	}
	fb = AppendTLV(fb, tagFareboxFlags, []byte{flags})
	b = AppendTLV(b, TagProductTransaction, fb)

	// Issue data: sequence numbers and the issuing "SAM" (farebox has no
	// security module: both sequence numbers are the ticket number, the
	// SAM id is the organisation).
	b = binary.BigEndian.AppendUint32(b, n)
	b = append(b, 1)
	b = binary.BigEndian.AppendUint32(b, n)
	b = append(b, 0, byte(iss.Org>>8), byte(iss.Org))

	for len(b) < minTicketLen-trailerLen {
		b = append(b, 0)
	}
	b = append(b, 'V', 'D', 'V')
	return append(b, TrailerVersion[:]...), nil
}

var errTicket = errors.New("malformed VDV ticket data")

func ticketErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errTicket, fmt.Sprintf(format, a...))
}

// DecodeTicket reads ticket data (the recovered message).
func DecodeTicket(b []byte) (Ticket, error) {
	var t Ticket
	if len(b) < minTicketLen {
		return t, ticketErr("%d bytes, at least %d expected", len(b), minTicketLen)
	}
	t.Number = binary.BigEndian.Uint32(b[0:4])
	t.Org = int(binary.BigEndian.Uint16(b[4:6]))
	t.ProductNumber = int(binary.BigEndian.Uint16(b[6:8]))
	t.ProductOrg = int(binary.BigEndian.Uint16(b[8:10]))
	var err error
	if t.ValidFrom, err = dateTime(b[10:14]); err != nil {
		return t, ticketErr("validity begin: %v", err)
	}
	if t.ValidUntil, err = dateTime(b[14:18]); err != nil {
		return t, ticketErr("validity end: %v", err)
	}
	t.ValidFrom, t.ValidUntil = t.ValidFrom.UTC(), t.ValidUntil.UTC()
	prod, rest, err := ReadTagged(b[headerLen:], TagProductData)
	if err != nil {
		return t, ticketErr("product data: %v", err)
	}
	elems, err := ParseTLVs(prod)
	if err != nil {
		return t, ticketErr("product data: %v", err)
	}
	if v, ok := Find(elems, tagBasicData); ok && len(v) >= 17 {
		t.PriceCents = int64(v[8])<<16 | int64(v[9])<<8 | int64(v[10])
		t.VATBP = int(binary.BigEndian.Uint16(v[11:13]))
	}
	if v, ok := Find(elems, tagTraveller); ok {
		if len(v) < 5 {
			return t, ticketErr("traveller data of %d bytes", len(v))
		}
		if !bytes.Equal(v[1:5], []byte{0, 0, 0, 0}) {
			bd, err := bcdDate(v[1:5])
			if err != nil {
				return t, ticketErr("birth date: %v", err)
			}
			t.BirthDate = bd.Format(time.DateOnly)
		}
		nameBytes := v[5:]
		if i := bytes.IndexByte(nameBytes, 0); i >= 0 {
			nameBytes = nameBytes[:i]
		}
		name, _ := charmap.ISO8859_15.NewDecoder().Bytes(nameBytes)
		if first, last, ok := strings.Cut(string(name), "#"); ok {
			t.FirstName, t.LastName = first, last
		} else {
			t.LastName = string(name)
		}
	}
	if len(rest) < commonTxLen {
		return t, ticketErr("common transaction data truncated")
	}
	tx := rest[:commonTxLen]
	t.TerminalType = int(tx[2])
	if t.IssuedAt, err = dateTime(tx[7:11]); err != nil {
		return t, ticketErr("transaction time: %v", err)
	}
	t.IssuedAt = t.IssuedAt.UTC()
	ptx, rest, err := ReadTagged(rest[commonTxLen:], TagProductTransaction)
	if err != nil {
		return t, ticketErr("product transaction data: %v", err)
	}
	t.Environment = barcode.EnvLive
	if fb, err := ParseTLVs(ptx); err == nil { // farebox's elements; other issuers write their own
		if v, ok := Find(fb, tagFareboxTicketID); ok {
			t.TicketID = string(v)
		}
		if v, ok := Find(fb, tagFareboxArea); ok {
			t.Area = string(v)
		}
		if v, ok := Find(fb, tagFareboxFlags); ok && len(v) == 1 && v[0]&1 != 0 {
			t.Environment = barcode.EnvTest
		}
	}
	if len(rest) < issueDataLen+trailerLen {
		return t, ticketErr("issue data or trailer missing")
	}
	t.SAMSeq1 = binary.BigEndian.Uint32(rest[0:4])
	t.SAMSeq2 = binary.BigEndian.Uint32(rest[5:9])
	t.SAMID = int(rest[9])<<16 | int(rest[10])<<8 | int(rest[11])
	pad, trailer := rest[issueDataLen:len(rest)-trailerLen], rest[len(rest)-trailerLen:]
	for _, c := range pad {
		if c != 0 {
			return t, ticketErr("non-zero bytes before the trailer")
		}
	}
	if string(trailer[:3]) != "VDV" {
		return t, ticketErr("trailer %q is not VDV", trailer[:3])
	}
	copy(t.Version[:], trailer[3:])
	t.ProductID = fmt.Sprint(t.ProductNumber)
	t.ProductName = ProductName(t.ProductNumber)
	return t, nil
}

// ProductName names the nationwide products by their reserved numbers.
func ProductName(n int) string {
	switch n {
	case 9999:
		return "Deutschlandticket"
	case 9998:
		return "Deutschlandjobticket"
	case 9997:
		return "Startkarte Deutschlandticket"
	case 9996:
		return "Deutschlandsemesterticket"
	}
	return fmt.Sprintf("product %d", n)
}
