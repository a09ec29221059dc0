package app

// The traveller page of a coupon (docs/web.md): what it shows, the
// activation from its form and the ticket document it offers.

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/engines"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/schema"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// CouponPage is what the traveller page of a coupon shows; its times are
// in the service's calendar zone (App.Loc), as travellers read them.
type CouponPage struct {
	CouponID    string
	ProductName string
	Validity    string // the product's local validity description
	AreaName    string
	Test        bool
	Activated   bool
	// Activatable: not activated and the activation window not over.
	Activatable      bool
	Earliest, Latest time.Time
	// Form holds the inputs built from the product's schemas.
	Form PageForm
	// Ticket is the coupon's newest ticket (the current month's for a
	// subscription), nil before activation.
	Ticket *PageTicket
	// Renewable: a subscription's next cycle is ordered and can be
	// activated now (by the newest ticket's reactivation key).
	Renewable bool
}

// PageForm is the activation form of the traveller page: the
// identification medium's alternatives and the tariff settings' fields.
type PageForm struct {
	Options []PageFormOption
	Tariff  []PageFormField
}

// PageFormOption is one alternative of the identification medium.
type PageFormOption struct {
	Name   string // the option key, e.g. photo_id_lite
	Title  string
	Fields []PageFormField
}

// PageFormField is one text input.
type PageFormField struct {
	Name      string
	Title     string
	Format    string // "date", "phone", …
	Pattern   string
	MinLength int
	MaxLength int
	Enum      []string
	Example   string
	Required  bool
}

func pageForm(f schema.Form) PageForm {
	fields := func(in []schema.FormField) []PageFormField {
		if in == nil {
			return nil
		}
		out := make([]PageFormField, len(in))
		for i, x := range in {
			out[i] = PageFormField(x)
		}
		return out
	}
	out := PageForm{Tariff: fields(f.Tariff)}
	for _, o := range f.Options {
		out.Options = append(out.Options, PageFormOption{Name: o.Name, Title: o.Title, Fields: fields(o.Fields)})
	}
	return out
}

// PageTicket is a ticket as the traveller page lists it.
type PageTicket struct {
	ID                    string
	ValidFrom, ValidUntil time.Time
	Valid                 bool
	// Apple and Google say which passes the server can build.
	Apple, Google bool
}

// CouponPage returns the traveller page's view of coupon id.
func (a *App) CouponPage(ctx context.Context, offers passes.Offers, id string) (CouponPage, error) {
	const op = "app.CouponPage"
	q := a.store.Read()
	d, err := a.Coupon(ctx, id)
	if err != nil {
		return CouponPage{}, err
	}
	now := a.clock.Now()
	p := CouponPage{CouponID: d.Coupon.ID, ProductName: d.Product.LocalTicketName, Validity: d.Product.LocalValidityDescription,
		AreaName: d.Area.Name, Test: d.Coupon.Environment == account.Test, Activated: d.Coupon.Activated,
		Earliest: d.Window.Earliest.In(a.Loc), Latest: d.Window.Latest.In(a.Loc)}
	p.Activatable = !d.Coupon.Activated && d.Coupon.RestoredCouponID == nil && !now.After(d.Window.Latest)
	form, err := schema.FormOf(d.Product.IdentificationMediumSchema, d.Product.TariffSettingsSchema)
	if err != nil {
		return p, apperr.E(op, apperr.Internal, CodeCatalogInvalid, err.Error())
	}
	p.Form = pageForm(form)
	newest, err := newestTicket(ctx, q, id)
	if err != nil || newest == nil {
		return p, err
	}
	td, err := a.ticketDetails(ctx, q, *newest)
	if err != nil {
		return p, err
	}
	o, err := offers(td)
	if err != nil {
		return p, err
	}
	p.Ticket = &PageTicket{ID: newest.ID, ValidFrom: newest.ValidFrom.In(a.Loc), ValidUntil: newest.ValidUntil.In(a.Loc),
		Valid: td.Valid && newest.InvalidatedAt == nil && now.Before(newest.ValidUntil.Add(time.Second))}
	for _, opt := range o.Options {
		p.Ticket.Apple = p.Ticket.Apple || opt == "apple_wallet"
		p.Ticket.Google = p.Ticket.Google || opt == "google_wallet"
	}
	p.Renewable = d.Subscription != nil && d.Subscription.View.CouponReactivatable && newest.ReactivationKey != nil
	return p, nil
}

// newestTicket is the coupon's ticket with the latest start (nil: none).
func newestTicket(ctx context.Context, q store.Q, couponID string) (*ticketing.Ticket, error) {
	ts, err := q.TicketsOfCoupon(ctx, couponID)
	if err != nil || len(ts) == 0 {
		return nil, err
	}
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].ValidFrom.Before(ts[j].ValidFrom) })
	return &ts[len(ts)-1], nil
}

// ActivateFromPage activates coupon id with the traveller page's form:
// "option" names the identification option, "medium.<field>" its fields,
// "tariff.<field>" the tariff settings, "start" an optional start. With
// "renew" set it reactivates the subscription's next cycle with the newest
// ticket's reactivation key. The values are checked against the product's
// schemas exactly as the API's activation checks them.
func (a *App) ActivateFromPage(ctx context.Context, claim idempotency.Claim, id string, form map[string][]string) (Activation, error) {
	const op = "app.ActivateFromPage"
	get := func(k string) string {
		if v := form[k]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	req := ActivationRequest{Version: 9}
	if get("renew") != "" {
		t, err := newestTicket(ctx, a.store.Read(), id)
		if err != nil {
			return Activation{}, err
		}
		if t == nil || t.ReactivationKey == nil {
			return Activation{}, apperr.E(op, apperr.Unprocessable, CodeNothingToRenew, "the coupon has no ticket to renew")
		}
		req.ReactivationKey = *t.ReactivationKey
		return a.ActivateCoupon(ctx, claim, id, req)
	}
	d, err := a.Coupon(ctx, id)
	if err != nil {
		return Activation{}, err
	}
	f, err := schema.FormOf(d.Product.IdentificationMediumSchema, d.Product.TariffSettingsSchema)
	if err != nil {
		return Activation{}, apperr.E(op, apperr.Internal, CodeCatalogInvalid, err.Error())
	}
	option := get("option")
	if option == "" && len(f.Options) == 1 {
		option = f.Options[0].Name
	}
	for _, o := range f.Options {
		if o.Name != option {
			continue
		}
		fields := map[string]string{}
		for _, fl := range o.Fields {
			if v := get("medium." + fl.Name); v != "" {
				fields[fl.Name] = v
			}
		}
		if req.IdentificationMedium, err = json.Marshal(map[string]any{option: fields}); err != nil {
			return Activation{}, apperr.Wrap(op, err)
		}
	}
	if len(f.Options) > 0 && req.IdentificationMedium == nil {
		return Activation{}, apperr.Validation(op, CodeInvalidOption, "/identification_medium", "identification_medium: choose one of the offered options")
	}
	if len(f.Tariff) > 0 {
		ts := map[string]string{}
		for _, fl := range f.Tariff {
			if v := get("tariff." + fl.Name); v != "" {
				ts[fl.Name] = v
			}
		}
		if req.TariffSettings, err = json.Marshal(ts); err != nil {
			return Activation{}, apperr.Wrap(op, err)
		}
	}
	if s := get("start"); s != "" {
		// <input type="datetime-local"> sends local time without zone;
		// the service's calendar zone gives it one.
		t, err := time.ParseInLocation("2006-01-02T15:04", s, a.Loc)
		if err != nil {
			return Activation{}, apperr.Validation(op, CodeInvalidStart, "/activation_start_datetime", "activation_start_datetime: a date and time such as 2026-12-01T08:00")
		}
		req.ActivationStart = t.UTC().Format(time.RFC3339)
	}
	return a.ActivateCoupon(ctx, claim, id, req)
}

// CouponTicketDocument is the rendering engine's document showing the
// coupon's newest ticket: the engine HTML with a last script that calls
// window.renderTicket with the ticket's JSON, as the SDKs do
// (client-contract.md 6.2).
func (a *App) CouponTicketDocument(ctx context.Context, offers passes.Offers, id string) ([]byte, error) {
	const op = "app.CouponTicketDocument"
	q := a.store.Read()
	if _, err := q.Coupon(ctx, id); err != nil {
		return nil, err
	}
	t, err := newestTicket(ctx, q, id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, apperr.E(op, apperr.NotFound, CodeNotActivated, "the coupon has no ticket yet")
	}
	td, err := a.ticketDetails(ctx, q, *t)
	if err != nil {
		return nil, err
	}
	tj, err := TicketResponse(td, offers)
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(tj) // escapes <, > and &: safe inside <script>
	if err != nil {
		return nil, apperr.Wrap(op, err)
	}
	doc := engines.RenderingEngine().HTML
	call := []byte("<script>window.renderTicket(" + string(js) + ");</script>\n</body>")
	i := bytes.LastIndex(doc, []byte("</body>"))
	if i < 0 {
		return nil, apperr.E(op, apperr.Internal, CodeEngineNotFound, "the rendering engine has no </body>")
	}
	out := make([]byte, 0, len(doc)+len(call))
	out = append(append(append(out, doc[:i]...), call...), doc[i+len("</body>"):]...)
	return out, nil
}
