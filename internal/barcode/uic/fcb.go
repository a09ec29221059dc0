package uic

import (
	"errors"
	"fmt"
)

// FCBVersion is the U_FLEX record version this package writes: 13, the
// final FCB version 1.3 (uicRailTicketData_v1.3), the version the
// independent decoder available in Debian (KDE Itinerary 22.12) reads; see
// docs/barcodes.md for why not FCB 3.
const FCBVersion = 13

// FCB is the subset of the UIC Flexible Content Barcode (UicRailTicketData,
// FCB 1.3) farebox writes: issuing details, one traveller and one
// transport document, an open ticket. Zero values mean "absent" for the
// optional fields; the fields in comments are always written.
type FCB struct {
	// IssuingData
	SecurityProviderNum int // RICS code of the signer (1..32000)
	IssuerNum           int // RICS code of the issuer (1..32000)
	IssuingYear         int // always; 2016..2269, UTC
	IssuingDay          int // always; 1..366, day of the year
	IssuingTime         int // always; minutes of the day, 0..1440
	IssuerName          string
	Specimen            bool // always; a test ticket, not valid for travel
	Activated           bool // always
	IssuerPNR           string

	// TravelerData: one traveller, the ticket holder
	FirstName   string
	LastName    string
	YearOfBirth int // 1901..2155, 0 = absent
	DayOfBirth  int // 1..366 day of the year, 0 = absent (with YearOfBirth 0)

	// OpenTicketData
	ReferenceIA5     string // the ticket number
	ProductOwnerNum  int    // RICS code, 0 = absent
	ProductIDNum     int    // 0..32000, -1 = absent
	ProductIDIA5     string
	ValidRegionDesc  string // the area the ticket is valid in
	ValidFromDay     int    // always; days from the issuing date, -1..700
	ValidFromTime    int    // always; minutes, local time
	ValidFromOffset  int    // always; quarter hours, UTC = local + offset*15min
	ValidUntilDay    int    // always; days from the valid-from date, 0..370
	ValidUntilTime   int    // always; minutes, local time
	ValidUntilOffset int    // always
	TariffDesc       string // the product name
	InfoText         string
}

// Field counts of the optional/default bitmaps (FCB 1.3 schema order).
const (
	optRailTicketData = 4  // travelerDetail, transportDocument, controlDetail, extension
	optIssuingData    = 14 // securityProviderNum .. pointOfSale
	optTravelerData   = 3  // traveler, preferredLanguage, groupName
	optTravelerType   = 17 // firstName .. status
	optDocumentData   = 1  // token
	optOpenTicket     = 38 // referenceNum .. extension
	optTariffType     = 11 // numberOfPassengers .. reductionCard
	ticketChoices     = 12 // reservation .. delayConfirmation
	choiceOpenTicket  = 2
)

func presence(w *bitWriter, p ...bool) {
	for _, b := range p {
		w.bit(b)
	}
}

// Marshal encodes f as UPER.
func (f FCB) Marshal() ([]byte, error) {
	var w bitWriter
	traveller := f.FirstName != "" || f.LastName != "" || f.YearOfBirth != 0
	// UicRailTicketData
	w.bit(false)
	presence(&w, traveller, true, false, false)
	// IssuingData
	w.bit(false)
	presence(&w, f.SecurityProviderNum != 0, false, f.IssuerNum != 0, false, true, f.IssuerName != "",
		false, false, f.IssuerPNR != "", false, false, false, false, false)
	if f.SecurityProviderNum != 0 {
		w.constrained("securityProviderNum", int64(f.SecurityProviderNum), 1, 32000)
	}
	if f.IssuerNum != 0 {
		w.constrained("issuerNum", int64(f.IssuerNum), 1, 32000)
	}
	w.constrained("issuingYear", int64(f.IssuingYear), 2016, 2269)
	w.constrained("issuingDay", int64(f.IssuingDay), 1, 366)
	w.constrained("issuingTime", int64(f.IssuingTime), 0, 1440)
	if f.IssuerName != "" {
		w.utf8("issuerName", f.IssuerName)
	}
	w.bit(f.Specimen)
	w.bit(false) // securePaperTicket
	w.bit(f.Activated)
	if f.IssuerPNR != "" {
		w.ia5("issuerPNR", f.IssuerPNR)
	}
	if traveller {
		// TravelerData with one TravelerType
		w.bit(false)
		presence(&w, true, false, false)
		w.length("traveler", 1)
		w.bit(false)
		birth := f.YearOfBirth != 0
		presence(&w, f.FirstName != "", false, f.LastName != "", false, false, false, false, false, false,
			birth, birth, false, false, false, false, false, false)
		if f.FirstName != "" {
			w.utf8("firstName", f.FirstName)
		}
		if f.LastName != "" {
			w.utf8("lastName", f.LastName)
		}
		if birth {
			w.constrained("yearOfBirth", int64(f.YearOfBirth), 1901, 2155)
			w.constrained("dayOfBirth", int64(f.DayOfBirth), 0, 370)
		}
		w.bit(true) // ticketHolder
	}
	// transportDocument: one DocumentData holding an open ticket
	w.length("transportDocument", 1)
	w.bit(false)
	presence(&w, false) // token
	w.bit(false)        // CHOICE extension bit
	w.constrained("ticket", choiceOpenTicket, 0, ticketChoices-1)
	f.marshalOpenTicket(&w)
	return w.bytes()
}

func (f FCB) marshalOpenTicket(w *bitWriter) {
	w.bit(false)
	tariff := f.TariffDesc != ""
	p := make([]bool, optOpenTicket)
	p[1] = f.ReferenceIA5 != ""     // referenceIA5
	p[2] = f.ProductOwnerNum != 0   // productOwnerNum
	p[4] = f.ProductIDNum >= 0      // productIdNum
	p[5] = f.ProductIDIA5 != ""     // productIdIA5
	p[15] = f.ValidRegionDesc != "" // validRegionDesc
	p[18] = f.ValidFromDay != 0     // validFromDay (DEFAULT 0)
	p[19], p[20] = true, true       // validFromTime, validFromUTCOffset
	p[21] = f.ValidUntilDay != 0    // validUntilDay (DEFAULT 0)
	p[22], p[23] = true, true       // validUntilTime, validUntilUTCOffset
	p[31] = tariff                  // tariffs
	p[34] = f.InfoText != ""        // infoText
	presence(w, p...)
	if p[1] {
		w.ia5("referenceIA5", f.ReferenceIA5)
	}
	if p[2] {
		w.constrained("productOwnerNum", int64(f.ProductOwnerNum), 1, 32000)
	}
	if p[4] {
		w.constrained("productIdNum", int64(f.ProductIDNum), 0, 32000)
	}
	if p[5] {
		w.ia5("productIdIA5", f.ProductIDIA5)
	}
	w.bit(false) // returnIncluded
	if p[15] {
		w.utf8("validRegionDesc", f.ValidRegionDesc)
	}
	if p[18] {
		w.constrained("validFromDay", int64(f.ValidFromDay), -1, 700)
	}
	w.constrained("validFromTime", int64(f.ValidFromTime), 0, 1440)
	w.constrained("validFromUTCOffset", int64(f.ValidFromOffset), -60, 60)
	if p[21] {
		w.constrained("validUntilDay", int64(f.ValidUntilDay), 0, 370)
	}
	w.constrained("validUntilTime", int64(f.ValidUntilTime), 0, 1440)
	w.constrained("validUntilUTCOffset", int64(f.ValidUntilOffset), -60, 60)
	if tariff {
		// one TariffType: one adult, the traveller above, the product name
		w.length("tariffs", 1)
		w.bit(false)
		presence(w, false, false, false, false, true, false, false, false, false, true, false)
		w.length("travelerid", 1)
		w.constrained("travelerid", 1, 0, 254)
		w.bit(false) // restrictedToCountryOfResidence
		w.utf8("tariffDesc", f.TariffDesc)
	}
	if p[34] {
		w.utf8("infoText", f.InfoText)
	}
}

// UnmarshalFCB decodes what Marshal writes. Anything outside the subset
// (other documents, extensions, other optional fields) is refused with an
// error naming it: farebox verifies only what it issues.
func UnmarshalFCB(b []byte) (FCB, error) {
	r := bitReader{buf: b}
	f := FCB{ProductIDNum: -1}
	r.noExtension("UicRailTicketData")
	top := r.optionals(optRailTicketData)
	if r.err == nil && (top[2] || top[3] || !top[1]) {
		return f, errors.New("fcb: only travelerDetail and transportDocument are supported")
	}
	r.noExtension("IssuingData")
	p := r.optionals(optIssuingData)
	if r.err == nil && (p[1] || p[3] || p[6] || p[7] || p[9] || p[10] || p[11] || p[12] || p[13] || !p[4]) {
		return f, errors.New("fcb: issuingDetail has fields outside farebox's subset")
	}
	if p[0] {
		f.SecurityProviderNum = int(r.constrained("securityProviderNum", 1, 32000))
	}
	if p[2] {
		f.IssuerNum = int(r.constrained("issuerNum", 1, 32000))
	}
	f.IssuingYear = int(r.constrained("issuingYear", 2016, 2269))
	f.IssuingDay = int(r.constrained("issuingDay", 1, 366))
	f.IssuingTime = int(r.constrained("issuingTime", 0, 1440))
	if p[5] {
		f.IssuerName = r.utf8("issuerName")
	}
	f.Specimen = r.bit()
	if r.bit() {
		r.fail("fcb: securePaperTicket is not supported")
	}
	f.Activated = r.bit()
	if p[8] {
		f.IssuerPNR = r.ia5("issuerPNR")
	}
	if top[0] {
		r.noExtension("TravelerData")
		tp := r.optionals(optTravelerData)
		if r.err == nil && (!tp[0] || tp[1] || tp[2]) {
			return f, errors.New("fcb: travelerDetail has fields outside farebox's subset")
		}
		if n := r.length("traveler"); n != 1 && r.err == nil {
			return f, fmt.Errorf("fcb: %d travellers, farebox writes one", n)
		}
		r.noExtension("TravelerType")
		q := r.optionals(optTravelerType)
		for i, set := range q {
			if set && i != 0 && i != 2 && i != 9 && i != 10 && r.err == nil {
				return f, fmt.Errorf("fcb: traveler field %d is outside farebox's subset", i)
			}
		}
		if q[0] {
			f.FirstName = r.utf8("firstName")
		}
		if q[2] {
			f.LastName = r.utf8("lastName")
		}
		if q[9] != q[10] && r.err == nil {
			return f, errors.New("fcb: birth date needs both year and day")
		}
		if q[9] {
			f.YearOfBirth = int(r.constrained("yearOfBirth", 1901, 2155))
			f.DayOfBirth = int(r.constrained("dayOfBirth", 0, 370))
		}
		if !r.bit() && r.err == nil {
			return f, errors.New("fcb: the traveller is not the ticket holder")
		}
	}
	if n := r.length("transportDocument"); n != 1 && r.err == nil {
		return f, fmt.Errorf("fcb: %d transport documents, farebox writes one", n)
	}
	r.noExtension("DocumentData")
	if r.optionals(optDocumentData)[0] && r.err == nil {
		return f, errors.New("fcb: token is not supported")
	}
	r.noExtension("ticket")
	if c := r.constrained("ticket", 0, ticketChoices-1); c != choiceOpenTicket && r.err == nil {
		return f, fmt.Errorf("fcb: document choice %d is not an open ticket", c)
	}
	if err := f.unmarshalOpenTicket(&r); err != nil {
		return f, err
	}
	if r.err != nil {
		return f, fmt.Errorf("fcb: %w", r.err)
	}
	// Everything after the last field must be the zero padding of the octet.
	if len(b)-(r.pos+7)/8 != 0 || (r.pos%8 != 0 && b[len(b)-1]&(0xff>>(uint(r.pos)%8)) != 0) {
		return f, errors.New("fcb: trailing data")
	}
	return f, nil
}

func (f *FCB) unmarshalOpenTicket(r *bitReader) error {
	r.noExtension("OpenTicketData")
	p := r.optionals(optOpenTicket)
	allowed := map[int]bool{1: true, 2: true, 4: true, 5: true, 15: true, 18: true, 19: true, 20: true, 21: true, 22: true, 23: true, 31: true, 34: true}
	for i, set := range p {
		if set && !allowed[i] && r.err == nil {
			return fmt.Errorf("fcb: openTicket field %d is outside farebox's subset", i)
		}
	}
	if r.err == nil && !(p[19] && p[20] && p[22] && p[23]) {
		return errors.New("fcb: openTicket lacks validity times")
	}
	if p[1] {
		f.ReferenceIA5 = r.ia5("referenceIA5")
	}
	if p[2] {
		f.ProductOwnerNum = int(r.constrained("productOwnerNum", 1, 32000))
	}
	if p[4] {
		f.ProductIDNum = int(r.constrained("productIdNum", 0, 32000))
	}
	if p[5] {
		f.ProductIDIA5 = r.ia5("productIdIA5")
	}
	if r.bit() {
		r.fail("fcb: returnIncluded is not supported")
	}
	if p[15] {
		f.ValidRegionDesc = r.utf8("validRegionDesc")
	}
	if p[18] {
		f.ValidFromDay = int(r.constrained("validFromDay", -1, 700))
	}
	f.ValidFromTime = int(r.constrained("validFromTime", 0, 1440))
	f.ValidFromOffset = int(r.constrained("validFromUTCOffset", -60, 60))
	if p[21] {
		f.ValidUntilDay = int(r.constrained("validUntilDay", 0, 370))
	}
	f.ValidUntilTime = int(r.constrained("validUntilTime", 0, 1440))
	f.ValidUntilOffset = int(r.constrained("validUntilUTCOffset", -60, 60))
	if p[31] {
		if n := r.length("tariffs"); n != 1 && r.err == nil {
			return fmt.Errorf("fcb: %d tariffs, farebox writes one", n)
		}
		r.noExtension("TariffType")
		tp := r.optionals(optTariffType)
		// travelerid (4) and tariffDesc (9), nothing else
		for i := range tp {
			if tp[i] != (i == 4 || i == 9) && r.err == nil {
				return errors.New("fcb: tariff fields outside farebox's subset")
			}
		}
		if n := r.length("travelerid"); n != 1 && r.err == nil {
			return errors.New("fcb: tariff must name the one traveller")
		}
		if r.constrained("travelerid", 0, 254) != 1 && r.err == nil {
			return errors.New("fcb: tariff must name traveller 1")
		}
		if r.bit() {
			r.fail("fcb: restrictedToCountryOfResidence is not supported")
		}
		f.TariffDesc = r.utf8("tariffDesc")
	}
	if p[34] {
		f.InfoText = r.utf8("infoText")
	}
	return nil
}
