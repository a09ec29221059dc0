package app

import (
	"encoding/json"
	"strings"

	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/subscription"
)

// OrderJSON is the Order of the interface; coupon_id (the first coupon) is a
// harmless extension partner backends read (client-contract.md 2.3).
type OrderJSON struct {
	OrderID                string       `json:"order_id"`
	OptionalOrderReference *string      `json:"optional_order_reference"`
	RestoreSecret          string       `json:"restore_secret,omitempty"`
	Environment            string       `json:"environment"`
	CouponID               string       `json:"coupon_id,omitempty"`
	Coupons                []CouponJSON `json:"coupons"`
	TestClock              *string      `json:"test_clock,omitempty"` // only for an order on a test clock
	// answer is this Order already encoded as the transport writes it
	// (the order POST's, spliced from its order.created object:
	// orderAnswer); nil for the encoder to do it.
	answer []byte
}

// Encoded is the Order already encoded as the transport writes it (with
// the final newline), or nil: then encode it.
func (o OrderJSON) Encoded() []byte { return o.answer }

// CouponJSON is the Coupon of the interface and client-contract.md 3.4.
type CouponJSON struct {
	ID                              string                   `json:"id"`
	OriginalCouponID                *string                  `json:"original_coupon_id"`
	RestoredCouponID                *string                  `json:"restored_coupon_id"`
	Product                         products.EmbeddedProduct `json:"product"`
	Area                            products.EmbeddedArea    `json:"area"`
	Subscription                    *SubscriptionJSON        `json:"subscription"`
	Activated                       bool                     `json:"activated"`
	Environment                     string                   `json:"environment"`
	BillableItemID                  *string                  `json:"billable_item_id"`
	TariffSettings                  json.RawMessage          `json:"tariff_settings"`
	TariffSettingsValid             *bool                    `json:"tariff_settings_valid"`
	EarliestActivationStartDatetime timestamp                `json:"earliest_activation_start_datetime"`
	LatestActivationStartDatetime   timestamp                `json:"latest_activation_start_datetime"`
	ActivatableUntil                *timestamp               `json:"activatable_until,omitempty"`
}

func couponView(d CouponDetails, version int) CouponJSON {
	c := d.Coupon
	ts := c.TariffSettings
	if len(ts) == 0 {
		ts = json.RawMessage("null")
	}
	v := CouponJSON{ID: c.ID, OriginalCouponID: c.OriginalCouponID, RestoredCouponID: c.RestoredCouponID,
		Product: products.ProductView(d.Product), Area: products.AreaView(&d.Area.Area, false), Activated: c.Activated,
		Environment: string(c.Environment), BillableItemID: c.BillableItemID, TariffSettings: ts,
		TariffSettingsValid: d.TariffSettingsValid, EarliestActivationStartDatetime: timestamp(d.Window.Earliest),
		LatestActivationStartDatetime: timestamp(d.Window.Latest)}
	if version >= 8 {
		v.ActivatableUntil = tsPtr(&d.Window.ActivatableUntil)
	}
	if d.Subscription != nil {
		s := subscriptionView(*d.Subscription)
		v.Subscription = &s
	}
	return v
}

// keylessCouponJSON is a CouponJSON for a reader who is not the coupon's
// owner: the shallower restored_coupon_id and restored_subscription_id
// fields shadow the embedded ones and, always nil, are left out.
type keylessCouponJSON struct {
	CouponJSON
	RestoredCouponID *string                  `json:"restored_coupon_id,omitempty"`
	Subscription     *keylessSubscriptionJSON `json:"subscription"`
}

type keylessSubscriptionJSON struct {
	SubscriptionJSON
	RestoredSubscriptionID *string `json:"restored_subscription_id,omitempty"`
}

// keylessCoupon is v without the ids of the records a restore made.
func keylessCoupon(v CouponJSON) keylessCouponJSON {
	out := keylessCouponJSON{CouponJSON: v}
	if v.Subscription != nil {
		out.Subscription = &keylessSubscriptionJSON{SubscriptionJSON: *v.Subscription}
	}
	return out
}

// SubscriptionJSON is the Subscription of the interface plus what the SDKs
// need (client-contract.md 3.6): `active` next to the interface's `activate`.
type SubscriptionJSON struct {
	ID                             string      `json:"id"`
	OriginalSubscriptionID         *string     `json:"original_subscription_id"`
	RestoredSubscriptionID         *string     `json:"restored_subscription_id"`
	Active                         bool        `json:"active"`
	Activate                       bool        `json:"activate"`
	CouponReactivatable            bool        `json:"coupon_reactivatable"`
	SubscriptionReorderable        bool        `json:"subscription_reorderable"`
	CurrentCycleValidFrom          *timestamp  `json:"current_cycle_valid_from"`
	CurrentCycleValidUntil         *timestamp  `json:"current_cycle_valid_until"`
	OrderedUntil                   *timestamp  `json:"ordered_until"`
	CurrentSubscriptionCycle       cycleJSON   `json:"current_subscription_cycle"`
	NextSubscriptionCycle          *cycleJSON  `json:"next_subscription_cycle"`
	NextUnorderedSubscriptionCycle *cycleJSON  `json:"next_unordered_subscription_cycle"`
	SubscriptionCycles             []cycleJSON `json:"subscription_cycles"`
	CancelledAt                    *timestamp  `json:"cancelled_at"`
	EndsAt                         *timestamp  `json:"ends_at"`
}

// cycleJSON is a Subscription cycle (with the SDKs' product_id).
type cycleJSON struct {
	ID              string     `json:"id"`
	ProductID       string     `json:"product_id"`
	ValidFrom       *timestamp `json:"valid_from"`
	ValidUntil      *timestamp `json:"valid_until"`
	Ordered         bool       `json:"ordered"`
	CouponActivated bool       `json:"coupon_activated"`
	BillableItemID  *string    `json:"billable_item_id"`
}

func cycleView(c subscription.Cycle) cycleJSON {
	v := cycleJSON{ID: c.ID, ProductID: c.ProductID, Ordered: c.Ordered, CouponActivated: c.CouponActivated}
	if c.Dated() {
		v.ValidFrom, v.ValidUntil = tsPtr(&c.ValidFrom), tsPtr(&c.ValidUntil)
	}
	if c.BillableItemID != "" {
		id := c.BillableItemID
		v.BillableItemID = &id
	}
	return v
}

func subscriptionView(d SubscriptionDetails) SubscriptionJSON {
	s, view := d.Subscription, d.View
	v := SubscriptionJSON{ID: s.ID, OriginalSubscriptionID: s.OriginalSubscriptionID, RestoredSubscriptionID: s.RestoredSubscriptionID,
		Active: view.Active, Activate: view.Active, CouponReactivatable: view.CouponReactivatable,
		SubscriptionReorderable: view.Reorderable, CurrentSubscriptionCycle: cycleView(view.Current),
		CancelledAt: tsPtr(s.CancelRequestedAt), EndsAt: tsPtr(s.EndsAt), SubscriptionCycles: []cycleJSON{}}
	if view.Current.Dated() {
		v.CurrentCycleValidFrom, v.CurrentCycleValidUntil = tsPtr(&view.Current.ValidFrom), tsPtr(&view.Current.ValidUntil)
	}
	if !view.OrderedUntil.IsZero() {
		v.OrderedUntil = tsPtr(&view.OrderedUntil)
	}
	if view.Next != nil {
		c := cycleView(*view.Next)
		v.NextSubscriptionCycle = &c
	}
	if view.NextUnordered != nil {
		c := cycleView(*view.NextUnordered)
		v.NextUnorderedSubscriptionCycle = &c
	}
	for _, c := range d.Listed {
		v.SubscriptionCycles = append(v.SubscriptionCycles, cycleView(c))
	}
	return v
}

// ticketJSON is the Ticket of client-contract.md 3.7.
type ticketJSON struct {
	ID                    string                   `json:"id"`
	CouponID              string                   `json:"coupon_id"`
	CouponReactivationKey *string                  `json:"coupon_reactivation_key"`
	Product               products.EmbeddedProduct `json:"product"`
	Ticket                ticketDetails            `json:"ticket"`
	Area                  products.EmbeddedArea    `json:"area"`
	ValidFrom             timestamp                `json:"valid_from"`
	ValidUntil            timestamp                `json:"valid_until"`
	TicketCreatedAt       timestamp                `json:"ticket_created_at"`
	SoldAt                timestamp                `json:"sold_at"`
	Environment           string                   `json:"environment"`
	Valid                 bool                     `json:"valid"`
	// RevocationReason says why an invalid ticket stopped being valid
	// ("revoked: …", "restored: …"); null while valid.
	RevocationReason *string         `json:"revocation_reason"`
	TariffSettings   json.RawMessage `json:"tariff_settings"`
}

type ticketDetails struct {
	Meta       ticketMeta     `json:"meta"`
	Properties map[string]any `json:"properties"`
}

// ticketMeta: all four keys always (Android needs version, iOS template and requires_engine).
type ticketMeta struct {
	Version                   string   `json:"version"`
	Template                  string   `json:"template"`
	RequiresEngine            string   `json:"requires_engine"`
	AvailableRenderingOptions []string `json:"available_rendering_options"`
	// UnavailableRenderingOptions: wallets withheld from this ticket and
	// why (wallets.Service.Offer); left out when none, so the four
	// keys the SDKs read are unchanged.
	UnavailableRenderingOptions []passes.UnavailableOption `json:"unavailable_rendering_options,omitempty"`
}

// ticketTemplate and ticketMetaVersion name the inspection layout the
// rendering engine draws.
const (
	ticketTemplate    = "farebox_inspection"
	ticketMetaVersion = "1"
)

func ticketView(d TicketDetails, engineVersion string, options []string, extra map[string]any) ticketJSON {
	t := d.Ticket
	props := map[string]any{
		"identification_medium": json.RawMessage(t.IdentificationMedium),
		"product_name":          d.Product.LocalTicketName,
		"zone_name":             d.Area.LocalZoneName,
		"valid_from":            clock.Timestamp(t.ValidFrom),
		"valid_until":           clock.Timestamp(t.ValidUntil),
		"environment":           string(t.Environment),
		"valid":                 d.Valid,
	}
	if len(t.TariffSettings) > 0 {
		props["tariff_settings"] = json.RawMessage(t.TariffSettings)
	}
	var revocation *string
	if !d.Valid {
		// The rendering engine reads only properties (the SDKs drop other keys).
		reason := passes.RevokedReason(t)
		kind, text, _ := strings.Cut(reason, ": ")
		props["revocation"] = map[string]any{"kind": kind, "reason": text, "revoked_at": clock.Timestamp(*t.InvalidatedAt)}
		revocation = &reason
	}
	for k, v := range extra {
		props[k] = v
	}
	if options == nil {
		options = []string{}
	}
	ts := t.TariffSettings
	if len(ts) == 0 {
		ts = json.RawMessage("null")
	}
	return ticketJSON{ID: t.ID, CouponID: t.CouponID, CouponReactivationKey: t.ReactivationKey,
		Product: products.ProductView(d.Product),
		Ticket: ticketDetails{Meta: ticketMeta{Version: ticketMetaVersion, Template: ticketTemplate,
			RequiresEngine: engineVersion, AvailableRenderingOptions: options}, Properties: props},
		Area: products.AreaView(&d.Area.Area, true), ValidFrom: timestamp(t.ValidFrom), ValidUntil: timestamp(t.ValidUntil),
		TicketCreatedAt: timestamp(t.CreatedAt), SoldAt: timestamp(d.Coupon.CreatedAt), Environment: string(t.Environment),
		Valid: d.Valid, RevocationReason: revocation, TariffSettings: ts}
}

// ProductID is the id of the coupon's product ("" in an event's copy,
// where the product is a reference to the event's stored part).
func (c CouponJSON) ProductID() string {
	if p, ok := c.Product.(products.ProductJSON); ok {
		return p.ID
	}
	return ""
}

// ProductName is the local ticket name of the coupon's product (see
// ProductID).
func (c CouponJSON) ProductName() string {
	if p, ok := c.Product.(products.ProductJSON); ok {
		return p.LocalTicketName
	}
	return ""
}

// AreaName is the name of the coupon's area (see ProductID).
func (c CouponJSON) AreaName() string {
	if a, ok := c.Area.(products.AreaJSON); ok {
		return a.Properties.Name
	}
	return ""
}
