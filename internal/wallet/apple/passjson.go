package apple

import (
	"sort"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/wallet"
)

// PassJSON is the subset of pass.json that farebox writes.
type PassJSON struct {
	FormatVersion      int    `json:"formatVersion"`
	PassTypeIdentifier string `json:"passTypeIdentifier"`
	TeamIdentifier     string `json:"teamIdentifier"`
	SerialNumber       string `json:"serialNumber"`
	OrganizationName   string `json:"organizationName"`
	Description        string `json:"description"`
	LogoText           string `json:"logoText,omitempty"`
	ForegroundColor    string `json:"foregroundColor"`
	BackgroundColor    string `json:"backgroundColor"`
	LabelColor         string `json:"labelColor"`
	SharingProhibited  bool   `json:"sharingProhibited"`
	ExpirationDate     string `json:"expirationDate"`
	RelevantDate       string `json:"relevantDate"`
	Voided             bool   `json:"voided,omitempty"`
	// WebServiceURL and AuthenticationToken come only together: the device
	// registers for updates (docs/wallet.md, "Apple Wallet updates").
	WebServiceURL       string      `json:"webServiceURL,omitempty"`
	AuthenticationToken string      `json:"authenticationToken,omitempty"`
	Barcodes            []Barcode   `json:"barcodes"`
	BoardingPass        *FieldGroup `json:"boardingPass"`
}

// Barcode is one entry of pass.json barcodes.
type Barcode struct {
	Format          string `json:"format"`
	Message         string `json:"message"`
	MessageEncoding string `json:"messageEncoding"`
	AltText         string `json:"altText,omitempty"`
}

// FieldGroup is the boardingPass style dictionary.
type FieldGroup struct {
	TransitType     string  `json:"transitType"`
	HeaderFields    []Field `json:"headerFields,omitempty"`
	PrimaryFields   []Field `json:"primaryFields"`
	SecondaryFields []Field `json:"secondaryFields,omitempty"`
	AuxiliaryFields []Field `json:"auxiliaryFields,omitempty"`
	BackFields      []Field `json:"backFields,omitempty"`
}

// Field is one pass field; Value is a string (dates as W3C date-times with
// DateStyle/TimeStyle set).
type Field struct {
	Key           string `json:"key"`
	Label         string `json:"label,omitempty"`
	Value         string `json:"value"`
	DateStyle     string `json:"dateStyle,omitempty"`
	TimeStyle     string `json:"timeStyle,omitempty"`
	TextAlignment string `json:"textAlignment,omitempty"`
}

// TransitType of every farebox pass: a network or zone ticket, no vehicle type.
const TransitType = "PKTransitTypeGeneric"

// Localization keys; every label in pass.json is one of them.
var stringsTable = map[string][2]string{ // key → {en, de}
	"PASS_DESCRIPTION": {"Public transport ticket", "Fahrschein für den Nahverkehr"},
	"PRODUCT":          {"Ticket", "Fahrschein"},
	"PASSENGER":        {"Passenger", "Fahrgast"},
	"BIRTH_DATE":       {"Date of birth", "Geburtsdatum"},
	"VALID_FROM":       {"Valid from", "Gültig ab"},
	"VALID_UNTIL":      {"Valid until", "Gültig bis"},
	"AREA":             {"Area", "Tarifgebiet"},
	"VALIDITY":         {"Validity", "Gültigkeit"},
	"TICKET_ID":        {"Ticket number", "Ticketnummer"},
	"REFERENCE":        {"Reference", "Referenz"},
	"ENVIRONMENT":      {"Environment", "Umgebung"},
	"TEST_VALUE":       {"TEST – not valid for travel", "TEST – nicht gültig"},
	"STATUS":           {"Status", "Status"},
	"VOIDED_VALUE":     {"Revoked – not valid", "Ungültig"},
	"REPLACED_VALUE":   {"Replaced by a new ticket", "Ersetzt"},
	"OPERATOR":         {"Issued by", "Ausgegeben von"},
	"NOTE":             {"Note", "Hinweis"},
	"INSPECTION":       {"Inspection", "Kontrolle"},
	"STILL_CODE_TEXT": {"Apple Wallet cannot show a moving code: this pass is a still copy of the ticket and does not count at inspection. Show the ticket in the app.",
		"Apple Wallet kann keinen wechselnden Code zeigen: Dieser Pass ist ein Abbild des Tickets und gilt nicht bei der Kontrolle. Zeigen Sie das Ticket in der App."},
	"NOTE_TEXT": {"Valid only together with an official photo ID of the passenger. Show the barcode on inspection.", "Nur gültig mit amtlichem Lichtbildausweis des Fahrgasts. Bei der Kontrolle den Barcode vorzeigen."},
}

// StringsFile renders <lang>.lproj/pass.strings for lang "en" or "de".
func StringsFile(lang string) []byte {
	idx := 0
	if lang == "de" {
		idx = 1
	}
	keys := make([]string, 0, len(stringsTable))
	for k := range stringsTable {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("/* farebox pass strings (" + lang + ") */\n")
	for _, k := range keys {
		b.WriteString(quote(k) + " = " + quote(stringsTable[k][idx]) + ";\n")
	}
	return []byte(b.String())
}

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// testBackground is the background of every test-environment pass.
const testBackground = "rgb(138, 28, 28)"

// passJSON builds pass.json for p.
func passJSON(p wallet.Pass, passTypeID, teamID string, b wallet.Brand) PassJSON {
	fg, bg, label := b.Foreground.RGB(), b.Background.RGB(), b.Label.RGB()
	if p.Test() {
		fg, bg, label = "rgb(255, 255, 255)", testBackground, "rgb(255, 212, 0)" // a test pass must never look live
	}
	w3c := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	bp := &FieldGroup{
		TransitType:   TransitType,
		PrimaryFields: []Field{{Key: "product", Label: "PRODUCT", Value: p.ProductName}},
		AuxiliaryFields: []Field{
			{Key: "valid_from", Label: "VALID_FROM", Value: w3c(p.ValidFrom), DateStyle: "PKDateStyleMedium", TimeStyle: "PKDateStyleShort"},
			{Key: "valid_until", Label: "VALID_UNTIL", Value: w3c(p.ValidUntil), DateStyle: "PKDateStyleMedium", TimeStyle: "PKDateStyleShort", TextAlignment: "PKTextAlignmentRight"},
		},
	}
	if p.Test() {
		bp.HeaderFields = append(bp.HeaderFields, Field{Key: "environment", Label: "ENVIRONMENT", Value: "TEST_VALUE"})
	}
	if p.Voided {
		status := "VOIDED_VALUE"
		if p.Replaced {
			status = "REPLACED_VALUE" // restored away: the new phone's ticket replaced it
		}
		bp.HeaderFields = append(bp.HeaderFields, Field{Key: "status", Label: "STATUS", Value: status})
	}
	if name := p.Passenger.Name(); name != "" {
		bp.SecondaryFields = append(bp.SecondaryFields, Field{Key: "passenger", Label: "PASSENGER", Value: name})
	}
	if p.Passenger.BirthDate != "" {
		bp.SecondaryFields = append(bp.SecondaryFields, Field{Key: "birth_date", Label: "BIRTH_DATE", Value: wallet.GermanDate(p.Passenger.BirthDate), TextAlignment: "PKTextAlignmentRight"})
	}
	if a := p.Area(); a != "" {
		bp.BackFields = append(bp.BackFields, Field{Key: "area", Label: "AREA", Value: a})
	}
	if p.ValidityDescription != "" {
		bp.BackFields = append(bp.BackFields, Field{Key: "validity", Label: "VALIDITY", Value: p.ValidityDescription})
	}
	if c, err := barcode.Parse(p.Barcode); err == nil && c.Dynamic {
		// PassKit has no rotating barcode and runs no code: a dynamic
		// ticket's pass stays static and says so (docs/wallet.md).
		bp.BackFields = append(bp.BackFields, Field{Key: "inspection", Label: "INSPECTION", Value: "STILL_CODE_TEXT"})
	}
	bp.BackFields = append(bp.BackFields,
		Field{Key: "operator", Label: "OPERATOR", Value: b.Operator},
		Field{Key: "reference", Label: "REFERENCE", Value: p.ShortRef()},
		Field{Key: "ticket_id", Label: "TICKET_ID", Value: p.TicketID},
		Field{Key: "note", Label: "NOTE", Value: "NOTE_TEXT"},
	)
	return PassJSON{
		FormatVersion:      1,
		PassTypeIdentifier: passTypeID,
		TeamIdentifier:     teamID,
		SerialNumber:       p.TicketID,
		OrganizationName:   b.Organization,
		Description:        "PASS_DESCRIPTION",
		LogoText:           b.Organization,
		ForegroundColor:    fg,
		BackgroundColor:    bg,
		LabelColor:         label,
		SharingProhibited:  true,
		ExpirationDate:     w3c(p.ValidUntil),
		RelevantDate:       w3c(p.ValidFrom),
		Voided:             p.Voided,
		Barcodes: []Barcode{{
			Format:          "PKBarcodeFormatAztec",
			Message:         barcode.Latin1(p.Barcode),
			MessageEncoding: "iso-8859-1",
			AltText:         p.ShortRef(),
		}},
		BoardingPass: bp,
	}
}
