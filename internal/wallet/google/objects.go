package google

// Google Wallet REST resource subsets (walletobjects v1) farebox writes.

// LocalizedString is a text with translations.
type LocalizedString struct {
	DefaultValue     TranslatedString   `json:"defaultValue"`
	TranslatedValues []TranslatedString `json:"translatedValues,omitempty"`
}

// TranslatedString is one language's text.
type TranslatedString struct {
	Language string `json:"language"`
	Value    string `json:"value"`
}

// TransitClass is the class shared by all farebox tickets of one issuer.
type TransitClass struct {
	ID                  string           `json:"id"`
	IssuerName          string           `json:"issuerName"`
	ReviewStatus        string           `json:"reviewStatus"`
	TransitType         string           `json:"transitType"`
	TransitOperatorName *LocalizedString `json:"transitOperatorName,omitempty"`
	Logo                *Image           `json:"logo,omitempty"`
	HexBackgroundColor  string           `json:"hexBackgroundColor,omitempty"`
}

// Image references a hosted image.
type Image struct {
	SourceURI ImageURI `json:"sourceUri"`
}

// ImageURI is an image address.
type ImageURI struct {
	URI string `json:"uri"`
}

// TransitObject is one ticket. A skinny save JWT carries only ID and
// ClassID (the fields a full object always sets are omitted when empty).
type TransitObject struct {
	ID                string        `json:"id"`
	ClassID           string        `json:"classId"`
	State             string        `json:"state,omitempty"`
	TripType          string        `json:"tripType,omitempty"`
	PassengerType     string        `json:"passengerType,omitempty"`
	PassengerNames    string        `json:"passengerNames,omitempty"`
	TicketNumber      string        `json:"ticketNumber,omitempty"`
	TicketLeg         *TicketLeg    `json:"ticketLeg,omitempty"`
	ValidTimeInterval *TimeInterval `json:"validTimeInterval,omitempty"`
	Barcode           *Barcode      `json:"barcode,omitempty"`
	// RotatingBarcode replaces Barcode on passes of dynamic tickets
	// (docs/wallet.md "Rotating barcodes of dynamic tickets").
	RotatingBarcode    *RotatingBarcode `json:"rotatingBarcode,omitempty"`
	TextModulesData    []TextModule     `json:"textModulesData,omitempty"`
	HexBackgroundColor string           `json:"hexBackgroundColor,omitempty"`
}

// TicketLeg describes the journey; farebox sets the fare and the area.
type TicketLeg struct {
	OriginName *LocalizedString `json:"originName,omitempty"`
	FareName   *LocalizedString `json:"fareName,omitempty"`
}

// TimeInterval bounds validity.
type TimeInterval struct {
	Start *DateTime `json:"start,omitempty"`
	End   *DateTime `json:"end,omitempty"`
}

// DateTime is an ISO 8601 instant with offset.
type DateTime struct {
	Date string `json:"date"`
}

// Barcode is the rendered code; Value is the payload's base64url text form.
type Barcode struct {
	Type          string `json:"type"`
	Value         string `json:"value"`
	AlternateText string `json:"alternateText,omitempty"`
}

// TextModule is a header/body pair shown on the pass.
type TextModule struct {
	ID     string `json:"id"`
	Header string `json:"header"`
	Body   string `json:"body"`
}

// RotatingBarcode is Google's TOTP-based moving code (walletobjects v1
// RotatingBarcode): Google Wallet replaces the substitutions of
// ValuePattern on the phone every TotpDetails.PeriodMillis.
type RotatingBarcode struct {
	Type          string      `json:"type"`
	ValuePattern  string      `json:"valuePattern"`
	TotpDetails   TotpDetails `json:"totpDetails"`
	AlternateText string      `json:"alternateText,omitempty"`
}

// TotpDetails configures the {totp_value_n} substitutions (RFC 6238).
// PeriodMillis is an int64, which the API's JSON writes as a string.
type TotpDetails struct {
	PeriodMillis string           `json:"periodMillis"`
	Algorithm    string           `json:"algorithm"` // "TOTP_SHA1"
	Parameters   []TotpParameters `json:"parameters"`
}

// TotpParameters is the key (Base16) and value length of one
// {totp_value_n}.
type TotpParameters struct {
	Key         string `json:"key"`
	ValueLength int    `json:"valueLength"`
}
