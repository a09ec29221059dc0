package app

// The traveller page of a coupon (docs/web.md): what it shows, the
// activation from its form and the ticket document it offers.

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/engines"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/schema"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/farebox/farebox/internal/validity"
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
	// Months are a calendar-month product's choices before activation:
	// the month of now and, while the window allows, the next one (empty
	// for other products, which take an optional start instead).
	Months []PageMonth
	// LateInMonth: fewer than LateMonthDays days of the current month are
	// left, so the page asks which month rather than assuming this one.
	LateInMonth bool
}

// LateMonthDays: with fewer days than this left in the month, the
// traveller page preselects no month and says how few days are left.
const LateMonthDays = 10

// PageMonth is a month a calendar-month ticket can cover.
type PageMonth struct {
	Value       string // "this" or "next", the form's month field
	From, Until time.Time
	DaysLeft    int // days of the month from today, today included
}

// PageForm is the activation form of the traveller page: the
// identification medium's alternatives, the fields of all of them once
// (Medium: options share first and last name) and the tariff settings'
// fields.
type PageForm struct {
	Options []PageFormOption
	Medium  []PageMediumField
	Tariff  []PageFormField
}

// PageMediumField is an identification field and the options asking for it.
type PageMediumField struct {
	PageFormField
	Options []string // the names of the options with this field
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
	// Literals are word choices beside the input (schema.FormField).
	Literals     []string
	InputPattern string
}

func pageForm(f schema.Form) PageForm {
	fields := func(in []schema.FormField) []PageFormField {
		return kit.Each(in, func(x schema.FormField) PageFormField { return PageFormField(x) })
	}
	out := PageForm{Tariff: fields(f.Tariff)}
	at := map[string]int{}
	for _, o := range f.Options {
		out.Options = append(out.Options, PageFormOption{Name: o.Name, Title: o.Title, Fields: fields(o.Fields)})
		for _, fl := range fields(o.Fields) {
			i, seen := at[fl.Name]
			if !seen {
				at[fl.Name] = len(out.Medium)
				out.Medium = append(out.Medium, PageMediumField{PageFormField: fl})
				i = len(out.Medium) - 1
			}
			m := &out.Medium[i]
			m.Required = m.Required || fl.Required
			m.Options = append(m.Options, o.Name)
		}
	}
	return out
}

// PageTicket is a ticket as the traveller page lists it.
type PageTicket struct {
	ID                    string
	ValidFrom, ValidUntil time.Time
	Valid                 bool
	// Upcoming: valid, but its validity starts later (a month chosen ahead).
	Upcoming bool
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
	if p.Activatable && d.Product.DurationDefinition == catalog.DurationCalendarMonth {
		p.Months, p.LateInMonth = a.pageMonths(now, d.Window)
	}
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
	p.Ticket.Upcoming = p.Ticket.Valid && now.Before(newest.ValidFrom)
	for _, opt := range o.Options {
		p.Ticket.Apple = p.Ticket.Apple || opt == "apple_wallet"
		p.Ticket.Google = p.Ticket.Google || opt == "google_wallet"
	}
	p.Renewable = d.Subscription != nil && d.Subscription.View.CouponReactivatable && newest.ReactivationKey != nil
	return p, nil
}

// pageMonths are the months a calendar-month coupon activated at now can
// cover: this one (while it is in the window) and the next (while it is).
func (a *App) pageMonths(now time.Time, w validity.ActivationWindow) (months []PageMonth, late bool) {
	today := now.In(a.Loc)
	next := clock.NextMonthStart(now, a.Loc)
	if !now.Before(w.Earliest) {
		from, until := validity.MonthWindow(now, a.Loc)
		left := int(next.Sub(time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, a.Loc)).Hours()/24 + 0.5)
		months = append(months, PageMonth{Value: "this", From: from.In(a.Loc), Until: until.In(a.Loc), DaysLeft: left})
		late = left < LateMonthDays
	}
	if !next.After(w.Latest) {
		from, until := validity.MonthWindow(next, a.Loc)
		months = append(months, PageMonth{Value: "next", From: from.In(a.Loc), Until: until.In(a.Loc)})
	}
	return months, late && len(months) > 1
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
// "tariff.<field>" the tariff settings ("choice.<field>" one of the
// field's word choices instead, such as not-germany), "month" a
// calendar-month product's month ("this" or "next") and "start" any other
// product's optional start. With "renew" set it reactivates the
// subscription's next cycle with the newest ticket's reactivation key.
// The page's fields are checked first (FormProblems: each field with its
// reason, for the page to show at the field); the values are then
// checked against the product's schemas exactly as the API's activation
// checks them.
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
	var problems FormProblems
	for _, o := range f.Options {
		if o.Name != option {
			continue
		}
		fields := map[string]string{}
		for _, fl := range o.Fields {
			v := get("medium." + fl.Name)
			problems = problems.check("medium."+fl.Name, fl, v)
			if v != "" {
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
			v := get("tariff." + fl.Name)
			if c := get("choice." + fl.Name); slices.Contains(fl.Literals, c) {
				v = c
			} else {
				problems = problems.check("tariff."+fl.Name, fl, v)
			}
			if v != "" {
				ts[fl.Name] = v
			}
		}
		if req.TariffSettings, err = json.Marshal(ts); err != nil {
			return Activation{}, apperr.Wrap(op, err)
		}
	}
	if len(problems) > 0 {
		return Activation{}, problems.err(op)
	}
	if req.ActivationStart, err = a.pageStart(op, get("month"), get("start")); err != nil {
		return Activation{}, err
	}
	return a.ActivateCoupon(ctx, claim, id, req)
}

// pageStart is the activation start the page's form asks for: the first
// instant of next month for month "next", the local time of start
// (<input type="datetime-local"> sends it without zone; the service's
// calendar zone gives it one), else none (now).
func (a *App) pageStart(op, month, start string) (string, error) {
	if month == "next" {
		return clock.Timestamp(clock.NextMonthStart(a.clock.Now(), a.Loc)), nil
	}
	if start == "" {
		return "", nil
	}
	t, err := time.ParseInLocation("2006-01-02T15:04", start, a.Loc)
	if err != nil {
		return "", apperr.Validation(op, CodeInvalidStart, "/activation_start_datetime", "activation_start_datetime: a date and time such as 2026-12-01T08:00")
	}
	return t.UTC().Format(time.RFC3339), nil
}

// FormProblem is a field of the traveller page's form that is refused
// before the schema check, and why: "required", "too_long", "date" (not a
// date of the calendar) or "pattern".
type FormProblem struct {
	Input  string // the form field: medium.<field> or tariff.<field>
	Reason string
}

// FormProblems are the refused fields of one post, in the form's order.
type FormProblems []FormProblem

func (p FormProblems) Error() string {
	parts := make([]string, len(p))
	for i, x := range p {
		parts[i] = x.Input + ": " + x.Reason
	}
	return strings.Join(parts, "; ")
}

// check adds input's problem, if its value v breaks the field's rules.
func (p FormProblems) check(input string, fl schema.FormField, v string) FormProblems {
	reason := ""
	switch {
	case v == "":
		if fl.Required {
			reason = "required"
		}
	case fl.MaxLength > 0 && utf8.RuneCountInString(v) > fl.MaxLength:
		reason = "too_long"
	case fl.Format == "date":
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			reason = "date"
		}
	case fl.Pattern != "":
		if re, err := regexp.Compile(fl.Pattern); err == nil && !re.MatchString(v) {
			reason = "pattern"
		}
	}
	if reason == "" {
		return p
	}
	return append(p, FormProblem{Input: input, Reason: reason})
}

// err is the 422 of the problems: the schema's code of the first field's
// target, a detail per field, the problems as the cause for the page.
func (p FormProblems) err(op string) error {
	target := schema.IdentificationMedium
	if strings.HasPrefix(p[0].Input, "tariff.") {
		target = schema.TariffSettings
	}
	details := make([]apperr.FieldError, len(p))
	for i, x := range p {
		group, field, _ := strings.Cut(x.Input, ".")
		t := "/identification_medium/"
		if group == "tariff" {
			t = "/tariff_settings/"
		}
		details[i] = apperr.FieldError{Field: t + field, Message: x.Reason}
	}
	return apperr.E(op, apperr.Unprocessable, target.Code, target.Prefix()+p.Error()).WithDetails(details...).WithCause(p)
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
