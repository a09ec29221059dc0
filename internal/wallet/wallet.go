package wallet

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
)

// Passenger is the person a ticket is bound to, from the identification
// medium. BirthDate is "YYYY-MM-DD" or empty.
type Passenger struct {
	FirstName string
	LastName  string
	BirthDate string
}

// Name is "First Last", trimmed.
func (p Passenger) Name() string { return strings.TrimSpace(p.FirstName + " " + p.LastName) }

// TicketView is everything a pass needs from a ticket. The HTTP layer fills
// it by copying fields of the stored ticket; nothing else is looked up.
type TicketView struct {
	TicketID            string    // ticket.id, also the pass serial number
	ProductID           string    // ticket.product.id
	ProductName         string    // ticket.product.local_ticket_name
	ValidityDescription string    // ticket.product.local_validity_description (optional)
	ZoneName            string    // ticket.area.properties.local_zone_name (optional)
	CityName            string    // ticket.area.properties.city_name (optional)
	ValidFrom           time.Time // ticket.valid_from
	ValidUntil          time.Time // ticket.valid_until
	Passenger           Passenger // from ticket.ticket.properties.identification_medium
	Environment         string    // "live" or "test"
	Voided              bool      // cancelled, refunded, revoked or restored away
	Replaced            bool      // voided because a restored coupon's ticket replaced it ("Ersetzt")
	Barcode             []byte    // the signed inspection payload (barcode.Sign)
	// WindowSeconds > 0 marks a ticket of a product with inspection profile
	// dynamic (docs/barcodes.md): its payload carries the window length and
	// DeviceKey, the bound device's public key (nil while unbound).
	WindowSeconds int
	DeviceKey     []byte
}

// Claims returns the inspection barcode claims of the ticket, ready for
// barcode.Sign (which sets the key id and version). Call it when the ticket
// is activated; store the payload and fill Barcode from it afterwards.
func (v TicketView) Claims() barcode.Claims {
	return barcode.Claims{
		TicketID:    v.TicketID,
		ProductID:   v.ProductID,
		ProductName: v.ProductName,
		ValidFrom:   v.ValidFrom.UTC().Truncate(time.Second),
		ValidUntil:  v.ValidUntil.UTC().Truncate(time.Second),
		FirstName:   v.Passenger.FirstName,
		LastName:    v.Passenger.LastName,
		BirthDate:   v.Passenger.BirthDate,
		Environment: v.Environment,
		Dynamic:     v.WindowSeconds > 0, WindowSeconds: v.WindowSeconds, DeviceKey: v.DeviceKey,
	}
}

// Pass is a validated TicketView ready for rendering by apple and google.
type Pass struct {
	TicketView
}

// NewPass validates v. A pass needs a ticket id, a product name, a validity
// window, an environment and a barcode payload.
func NewPass(v TicketView) (Pass, error) {
	const op = "wallet.NewPass"
	bad := func(field, msg string) (Pass, error) {
		return Pass{}, apperr.Validation(op, CodeInvalidTicketView, field, msg)
	}
	switch {
	case v.TicketID == "":
		return bad("/ticket_id", "ticket id is empty")
	case v.ProductName == "":
		return bad("/product_name", "product name is empty")
	case v.ValidFrom.IsZero() || v.ValidUntil.IsZero() || v.ValidUntil.Before(v.ValidFrom):
		return bad("/valid_until", "validity window is empty or reversed")
	case v.Environment != barcode.EnvLive && v.Environment != barcode.EnvTest:
		return bad("/environment", `environment must be "live" or "test"`)
	case len(v.Barcode) == 0:
		return bad("/barcode", "inspection barcode payload is empty")
	}
	v.ValidFrom, v.ValidUntil = v.ValidFrom.UTC(), v.ValidUntil.UTC()
	return Pass{TicketView: v}, nil
}

// Test reports a test-environment ticket (passes show a TEST marker).
func (p Pass) Test() bool { return p.Environment == barcode.EnvTest }

// ShortRef is what users see as the ticket reference: "T-" and the last six
// characters of the id, upper-cased (client-contract 3.7).
func (p Pass) ShortRef() string {
	id := p.TicketID
	if len(id) > 6 {
		id = id[len(id)-6:]
	}
	return "T-" + strings.ToUpper(id)
}

// Area is the zone and city text, or "" when neither is known.
func (p Pass) Area() string {
	switch {
	case p.ZoneName != "" && p.CityName != "" && p.ZoneName != p.CityName:
		return p.ZoneName + " (" + p.CityName + ")"
	case p.ZoneName != "":
		return p.ZoneName
	}
	return p.CityName
}

// medium options iOS reads the passenger name from (client-contract 3.9).
var mediumOptions = []string{"photo_id", "photo_id_lite", "photo_id_name_only"}

// PassengerFromIdentificationMedium reads first_name, last_name and
// birth_date from ticket.ticket.properties.identification_medium
// ({"photo_id_lite":{…}}). It takes the known options first, then any other
// option object; missing fields stay empty.
func PassengerFromIdentificationMedium(medium json.RawMessage) Passenger {
	var m map[string]map[string]any
	if json.Unmarshal(medium, &m) != nil {
		return Passenger{}
	}
	pick := func(o map[string]any) Passenger {
		s := func(k string) string { v, _ := o[k].(string); return v }
		return Passenger{FirstName: s("first_name"), LastName: s("last_name"), BirthDate: s("birth_date")}
	}
	for _, name := range mediumOptions {
		if o, ok := m[name]; ok {
			return pick(o)
		}
	}
	for _, o := range m {
		return pick(o)
	}
	return Passenger{}
}

// Rendering option strings of available_rendering_options.
const (
	OptionAppleWallet  = "apple_wallet"
	OptionGoogleWallet = "google_wallet"
)

// Availability says which passes the service can build right now. Apple is
// true only with an Apple-issued certificate (apple.Builder.Installable) or
// when development passes are explicitly allowed; Google only with a
// configured issuer (google.Issuer != nil).
type Availability struct {
	Apple  bool
	Google bool
}

// RenderingOptions is available_rendering_options for a ticket: each wallet
// whose pass can be built for it, in the order apple_wallet, google_wallet.
// A ticket without a barcode payload or validity gets none. The result is
// never nil, so it encodes as a JSON array.
func RenderingOptions(v TicketView, a Availability) []string {
	opts := []string{}
	if _, err := NewPass(v); err != nil {
		return opts
	}
	if a.Apple {
		opts = append(opts, OptionAppleWallet)
	}
	if a.Google {
		opts = append(opts, OptionGoogleWallet)
	}
	return opts
}

// ApplePassRecord is what the service keeps of an Apple pass it issued with
// webServiceURL (docs/wallet.md, "Apple Wallet updates"): the serial number
// (the ticket id the pass was first built for), the coupon whose tickets
// it follows, its authenticationToken, and its update tag and time.
type ApplePassRecord struct {
	SerialNumber string
	CouponID     string
	AuthToken    string
	UpdateSeq    int64
	UpdatedAt    time.Time
}
