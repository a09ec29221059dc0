package httpapi

import (
	"encoding/csv"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/app"
	billingapp "github.com/farebox/farebox/internal/app/billing"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/app/webusers"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/web"
)

// The partner dashboard (docs/web.md "Partner dashboard"): a user of an
// account, invited by the operator (farebox accounts invite), sees the
// account's usage, lists and keys. Every page below /dashboard/{env}/ is
// of one environment: the handlers call app with a principal of the
// session's account and that environment only, so test and live never
// mix; the layout shows the environment in a banner of its own colour.

// authDashboardSession resolves the dashboard session of an authDashboard
// row, and refuses an {env} other than live or test (404).
func (s *Server) authDashboardSession(r *http.Request) error {
	id := cookieValue(r, web.CookieName(sessionCookie(r), s.secure(r)))
	sess, err := s.WebUsers.WebSession(r.Context(), id)
	if apperr.KindOf(err) == apperr.NotFound || (err == nil && sess.Kind != webusers.WebDashboard) {
		return apperr.E("auth", apperr.Unauthenticated, CodeSignInRequired, "sign in to the dashboard first")
	}
	if err != nil {
		return err
	}
	if env := r.PathValue("env"); env != "" {
		if _, err := app.ParseEnvironment(env); err != nil {
			return apperr.NotFoundf("dashboard", CodeNotFound)
		}
	}
	state(r).dashboard = &sess
	return nil
}

// dashPrincipal is the caller the app's list methods see: the session's
// account in the page's environment.
func dashPrincipal(r *http.Request) app.Principal {
	return app.Principal{AccountID: state(r).dashboard.AccountID, Environment: app.Environment(r.PathValue("env"))}
}

// lang is the page's language: the page's language switch (?lang=de or
// en) when given, else the browser's Accept-Language.
func lang(r *http.Request) string {
	return web.Language(r.URL.Query().Get("lang"), r.Header.Get("Accept-Language"))
}

// dashRender renders a dashboard page of section nav.
func (s *Server) dashRender(w http.ResponseWriter, r *http.Request, status int, name, nav string, p web.Page) error {
	return s.dashRenderTitled(w, r, status, name, nav, "dash."+nav, p)
}

// dashRenderTitled renders a page of section nav under its own title (a
// record's page below the section's list).
func (s *Server) dashRenderTitled(w http.ResponseWriter, r *http.Request, status int, name, nav, title string, p web.Page) error {
	p.Nav, p.Env = nav, r.PathValue("env")
	return s.render(w, r, status, name, title, p)
}

func (s *Server) dashHome(w http.ResponseWriter, r *http.Request) error {
	http.Redirect(w, r, "/dashboard/test/usage", http.StatusSeeOther)
	return nil
}

func (s *Server) dashSignInForm(w http.ResponseWriter, r *http.Request) error {
	return s.render(w, r, http.StatusOK, "dash_signin", "dash.signin", web.Page{})
}

// dashSignIn checks the address and password; failures are throttled per
// client address and per address as the console's are.
func (s *Server) dashSignIn(w http.ResponseWriter, r *http.Request) error {
	email, password := r.PostForm.Get("email"), r.PostForm.Get("password")
	// The address as the sign-in reads it: "OPS@x" is the same user as "ops@x".
	return s.throttledSignIn(w, r, signInPage{
		keys:   []string{"dashboard-client:" + clientKey(r, s.TrustedProxies), "dashboard-user:" + strings.ToLower(strings.TrimSpace(email))},
		page:   "dash_signin",
		title:  "dash.signin",
		failed: "dash.signin.failed",
		home:   "/dashboard/test/usage",
		user:   email,
	}, func() (string, error) { return s.WebUsers.DashboardSignIn(r.Context(), claimOf(r), email, password) })
}

// inviteView is the set-password form's data.
type inviteView struct{ Token, Email string }

func (s *Server) dashInviteForm(w http.ResponseWriter, r *http.Request) error {
	token := r.URL.Query().Get("token")
	email, err := s.WebUsers.DashboardInvite(r.Context(), token)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "dash_invite", "dash.invite", web.Page{Data: inviteView{token, email}})
}

// dashAcceptInvite sets the password from the invitation (good once) and
// signs the user in. A refused password shows the form again.
func (s *Server) dashAcceptInvite(w http.ResponseWriter, r *http.Request) error {
	token := r.PostForm.Get("token")
	id, err := s.WebUsers.AcceptDashboardInvite(r.Context(), claimOf(r), token, r.PostForm.Get("password"), r.PostForm.Get("password_repeat"))
	if k := apperr.KindOf(err); k == apperr.Invalid || k == apperr.Unprocessable || k == apperr.Conflict {
		email, ierr := s.WebUsers.DashboardInvite(r.Context(), token)
		if ierr != nil {
			return ierr
		}
		return s.render(w, r, statusOf(apperr.KindOf(err)), "dash_invite", "dash.invite",
			web.Page{Data: inviteView{token, email}, Error: apperr.As(err).Msg})
	}
	if err != nil {
		return err
	}
	return s.startSession(w, r, id, "/dashboard/test/usage")
}

func (s *Server) dashSignOut(w http.ResponseWriter, r *http.Request) error {
	return s.signOut(w, r, "/dashboard/sign-in")
}

// usageRange is the page's from..to: the query's, or the last 30 days.
func (s *Server) usageRange(r *http.Request) (string, string) {
	q := r.URL.Query()
	to := s.app.Now().UTC()
	from, toS := q.Get("from"), q.Get("to")
	if toS == "" {
		toS = to.Format(time.DateOnly)
	}
	if from == "" {
		if t, err := time.Parse(time.DateOnly, toS); err == nil {
			from = t.AddDate(0, 0, -29).Format(time.DateOnly)
		}
	}
	return from, toS
}

// chart is the usage page's bar chart of one endpoint group ("" for all
// requests): one bar per day, the counted requests below the uncounted
// ones, on a scale of round values (niceScale). It is drawn twice, for a
// phone (chartNarrow units wide) and for a wide window (chartWide), the
// stylesheet showing the one whose text comes out at the page's size.
type chart struct {
	Group        string
	Counted      int64
	Uncounted    int64
	Narrow, Wide chartSVG
}

// chartSVG is one drawing of the chart.
type chartSVG struct {
	// BarsSVG is the bars as SVG elements, written by barsSVG: numbers,
	// dates and our own texts, each escaped (a template walking 30–366
	// bars cost more than the query).
	BarsSVG       template.HTML
	Width, Height int
	Left          int // where the bars start, right of the scale's labels
	LabelY        int // the baseline of the days' labels
	Ticks         []tick
	Days          []dayLabel
}

type bar struct {
	X, W, CountedY, CountedH, UncountedY, UncountedH float64
	Day                                              string
	Counted, Uncounted                               int64
}

type tick struct {
	Y     int
	Label string
}

// dayLabel is a day named under the bars, at X with its text anchor.
type dayLabel struct {
	X            float64
	Anchor, Text string
}

// groupLink is a choice of the chart's group, with its total.
type groupLink struct {
	Group, Href string
	Total       int64
	Current     bool
}

// usageView is the usage page's data.
type usageView struct {
	billingapp.UsageReport
	Chart      chart
	GroupLinks []groupLink
	CSV        string
	// Start is the getting-started path (dash_start.go), nil once done.
	Start *startView
}

// The charts' geometry in SVG units: the two widths, the bars' height and
// the room above them.
const chartNarrow, chartWide, chartH, chartTop = 330, 640, 160, 28

// niceScale is the top of a scale from 0 over top (at least 1) in four
// equal steps of 1, 2, 2.5 or 5 times a power of ten, and the step.
func niceScale(top int64) (max, step int64) {
	raw := float64(max64(top, 1)) / 4
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if st := m * p; st >= raw && st == math.Trunc(st) {
			step = int64(st)
			break
		}
	}
	if step == 0 {
		step = int64(math.Ceil(raw))
	}
	return 4 * step, step
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// barsSVG writes the chart's bars: per day a group with its tooltip, the
// counted bar and the uncounted one on top.
func barsSVG(bars []bar, counted, uncounted string) template.HTML {
	var b strings.Builder
	c, u := template.HTMLEscapeString(counted), template.HTMLEscapeString(uncounted)
	for _, x := range bars {
		fmt.Fprintf(&b, `<g><title>%s: %d %s, %d %s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" class="counted"/><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" class="uncounted"/></g>`,
			template.HTMLEscapeString(x.Day), x.Counted, c, x.Uncounted, u, x.X, x.CountedY, x.W, x.CountedH, x.X, x.UncountedY, x.W, x.UncountedH)
	}
	return template.HTML(b.String()) // every value above is a number or escaped
}

// usageChart draws group g of rep in the page's language l.
func usageChart(rep billingapp.UsageReport, g, l string) chart {
	c := chart{Group: g}
	var top int64
	for _, d := range rep.Days {
		x := groupOf(d, g)
		top = max64(top, x.Counted+x.Uncounted)
		c.Counted += x.Counted
		c.Uncounted += x.Uncounted
	}
	scale, step := niceScale(top)
	c.Narrow = drawChart(rep, g, l, chartNarrow, 5, scale, step)
	c.Wide = drawChart(rep, g, l, chartWide, 8, scale, step)
	return c
}

// drawChart is one drawing, width units wide with about labels days named.
func drawChart(rep billingapp.UsageReport, g, l string, width, labels int, scale, step int64) chartSVG {
	d := chartSVG{Width: width, Height: chartTop + chartH + 30, LabelY: chartTop + chartH + 22}
	d.Left = 9*len(web.Number(l, scale)) + 14
	for v := int64(0); v <= scale; v += step {
		d.Ticks = append(d.Ticks, tick{Y: chartTop + chartH - int(v*chartH/scale), Label: web.Number(l, v)})
	}
	n := len(rep.Days)
	slot := float64(width-d.Left-4) / float64(max(n, 1))
	gap := math.Min(2, slot/4)
	bars := make([]bar, 0, n)
	every := max(1, (n+labels-1)/labels)
	for i, day := range rep.Days {
		x := groupOf(day, g)
		ch := float64(x.Counted) * chartH / float64(scale)
		uh := float64(x.Uncounted) * chartH / float64(scale)
		left := float64(d.Left) + float64(i)*slot + gap
		bars = append(bars, bar{X: left, W: slot - 2*gap, CountedY: chartTop + chartH - ch, CountedH: ch,
			UncountedY: chartTop + chartH - ch - uh, UncountedH: uh, Day: day.Day, Counted: x.Counted, Uncounted: x.Uncounted})
		if (n-1-i)%every == 0 { // the last day always, then every few back
			anchor, cx := "middle", left+slot/2-gap
			if i == n-1 {
				anchor, cx = "end", float64(width-4)
			} else if cx < float64(d.Left)+24 {
				continue
			}
			d.Days = append(d.Days, dayLabel{X: cx, Anchor: anchor, Text: web.ShortDay(l, day.Day)})
		}
	}
	d.BarsSVG = barsSVG(bars, web.T(l, "dash.usage.counted"), web.T(l, "dash.usage.uncounted"))
	return d
}

// groupOf is day d's counts of group g ("" for all groups).
func groupOf(d billingapp.UsageDay, g string) billingapp.UsageGroup {
	if g == "" {
		return billingapp.UsageGroup{Counted: d.Counted, Uncounted: d.Uncounted}
	}
	for _, x := range d.Groups {
		if x.Group == g {
			return x
		}
	}
	return billingapp.UsageGroup{Group: g}
}

// dashUsageReport is the session's usage over the page's range (usageRange).
func (s *Server) dashUsageReport(r *http.Request) (billingapp.UsageReport, error) {
	from, to := s.usageRange(r)
	p := dashPrincipal(r)
	return s.Billing.DashboardUsage(r.Context(), p.AccountID, p.Environment, from, to)
}

func (s *Server) dashUsage(w http.ResponseWriter, r *http.Request) error {
	rep, err := s.dashUsageReport(r)
	if err != nil {
		return err
	}
	from, to, env := rep.From, rep.To, string(dashPrincipal(r).Environment)
	start, err := s.startPath(r)
	if err != nil {
		return err
	}
	l := lang(r)
	group := r.URL.Query().Get("group")
	if !slices.Contains(rep.Groups, group) {
		group = "" // an unknown group: all requests
	}
	base := "/dashboard/" + env + "/usage?"
	v := usageView{UsageReport: rep, Chart: usageChart(rep, group, l), Start: start,
		CSV: "/dashboard/" + env + "/usage.csv?" + url.Values{"from": {from}, "to": {to}}.Encode()}
	for _, g := range append([]string{""}, rep.Groups...) {
		q := url.Values{"from": {from}, "to": {to}}
		if g != "" {
			q.Set("group", g)
		}
		total := int64(0)
		for _, d := range rep.Days {
			x := groupOf(d, g)
			total += x.Counted + x.Uncounted
		}
		v.GroupLinks = append(v.GroupLinks, groupLink{Group: g, Href: base + q.Encode(), Total: total, Current: g == group})
	}
	return s.dashRender(w, r, http.StatusOK, "dash_usage", "usage", web.Page{Data: v})
}

// dashUsageCSV is the usage page's rows as CSV: one line per day and
// endpoint.
func (s *Server) dashUsageCSV(w http.ResponseWriter, r *http.Request) error {
	rep, err := s.dashUsageReport(r)
	if err != nil {
		return err
	}
	p := dashPrincipal(r)
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="usage-%s-%s-%s.csv"`, p.Environment, rep.From, rep.To))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"date", "environment", "group", "endpoint", "counted", "uncounted", "refused"})
	for _, row := range rep.Rows {
		_ = cw.Write([]string{row.Day, string(p.Environment), billingapp.EndpointGroup(row.Endpoint), row.Endpoint,
			strconv.FormatInt(row.Counted, 10), strconv.FormatInt(row.Uncounted, 10), strconv.FormatInt(row.Refused, 10)})
	}
	cw.Flush()
	return cw.Error()
}

// A dashboard list: column headings (message keys), rows of cells, a
// search box and the link to the next page.
type cell struct {
	Text, Href string
	// At is a moment written relative to now (ago), shown instead of Text.
	At template.HTML
	// Sub is the record's id under its name, small (a name first, the id
	// still there to copy).
	Sub  string
	Mono bool
	// Copy puts a copy button after the cell's id (Sub, else Text).
	Copy  bool
	Links []cell // several links in one cell (an invoice's files)
}

type listView struct {
	Columns []string
	Rows    [][]cell
	// Search is the query parameter of the search box ("" for none),
	// SearchLabel its label's message key, Query what was searched.
	Search, SearchLabel, Query string
	// States are the state filters, State the chosen one.
	States []string
	State  string
	Next   string
}

// listRequest reads the page's paging: starting_after from the query.
func listRequest(r *http.Request) app.ListRequest {
	return app.ListRequest{Limit: "25", StartingAfter: r.URL.Query().Get("starting_after")}
}

// nextLink is the next page's URL when there is more.
func nextLink(r *http.Request, hasMore bool, lastID string) string {
	if !hasMore || lastID == "" {
		return ""
	}
	q := r.URL.Query()
	q.Set("starting_after", lastID)
	return r.URL.Path + "?" + q.Encode()
}

// dashList renders a list page: one row of v per item (row gives its cells
// and its id, the last of which the next link starts after); an Invalid
// error shows the page with the message as 400.
func dashList[T any](s *Server, w http.ResponseWriter, r *http.Request, nav string, v listView, list app.ListJSON[T], err error, row func(T) ([]cell, string)) error {
	last := ""
	for _, x := range list.Data {
		var cells []cell
		cells, last = row(x)
		v.Rows = append(v.Rows, cells)
	}
	v.Next = nextLink(r, list.HasMore, last)
	if apperr.KindOf(err) == apperr.Invalid {
		return s.dashRender(w, r, http.StatusBadRequest, "dash_list", nav, web.Page{Data: v, Error: apperr.As(err).Msg})
	}
	if err != nil {
		return err
	}
	return s.dashRender(w, r, http.StatusOK, "dash_list", nav, web.Page{Data: v})
}

// ts writes t in the service's calendar zone, as the traveller page does.
func (s *Server) ts(l string, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return web.When(l, t.In(s.app.Loc))
}

// ago writes t relative to the service clock's now ("3 minutes ago"),
// the absolute time (in the calendar zone) as the <time> element's title.
func (s *Server) ago(l string, t time.Time) template.HTML {
	return web.Ago(l, t.In(s.app.Loc), s.app.Now())
}

// createdCell is an RFC 3339 timestamp's cell, relative to now (ago).
func (s *Server) createdCell(l string, v string) cell {
	t, err := clock.ParseTimestamp(v)
	if err != nil {
		return cell{Text: v}
	}
	return cell{At: s.ago(l, t)}
}

// productName is the product's ticket name, its id when the catalog no
// longer has it.
func (s *Server) productName(id string) string {
	if id == "" {
		return "—"
	}
	p, err := s.Products.Product(id)
	if err != nil {
		return id
	}
	return products.ProductView(p).LocalTicketName
}

func orDash(s *string) string {
	if s == nil {
		return "—"
	}
	return *s
}

func yesNo(l string, b bool) string {
	if b {
		return web.T(l, "dash.yes")
	}
	return web.T(l, "dash.no")
}

func (s *Server) dashOrders(w http.ResponseWriter, r *http.Request) error {
	ref := r.URL.Query().Get("reference")
	req := app.OrdersRequest{ListRequest: listRequest(r)}
	if ref != "" {
		req.OptionalOrderReference = &ref
	}
	v := listView{Columns: []string{"dash.col.order", "dash.col.reference", "dash.col.coupons", "dash.col.products"},
		Search: "reference", SearchLabel: "dash.search.reference", Query: ref}
	list, err := s.app.Orders(r.Context(), dashPrincipal(r), req)
	return dashList(s, w, r, "orders", v, list, err, func(o app.OrderJSON) ([]cell, string) {
		// The products by name, as the traveller sees them.
		products := make([]string, len(o.Coupons))
		for i, c := range o.Coupons {
			products[i] = c.ProductName()
		}
		return []cell{{Text: o.OrderID, Href: dashPath(r, "orders", o.OrderID), Mono: true}, {Text: orDash(o.OptionalOrderReference)},
			{Text: strconv.Itoa(len(o.Coupons))}, {Text: strings.Join(products, ", ")}}, o.OrderID
	})
}

func (s *Server) dashCoupons(w http.ResponseWriter, r *http.Request) error {
	l := lang(r)
	st := r.URL.Query().Get("state")
	v := listView{Columns: []string{"dash.col.coupon", "dash.col.product", "dash.col.area", "dash.col.activated", "dash.col.window"},
		States: []string{"", "not_activated", "activated", "restored"}, State: st}
	list, err := s.app.Coupons(r.Context(), dashPrincipal(r), app.CouponsRequest{ListRequest: listRequest(r), State: st})
	return dashList(s, w, r, "coupons", v, list, err, func(c app.CouponJSON) ([]cell, string) {
		return []cell{{Text: c.ID, Href: "/c/" + c.ID, Mono: true}, {Text: c.ProductName()},
			{Text: c.AreaName()}, {Text: yesNo(l, c.Activated)},
			{Text: s.ts(l, time.Time(c.EarliestActivationStartDatetime)) + " – " + s.ts(l, time.Time(c.LatestActivationStartDatetime))}}, c.ID
	})
}

func (s *Server) dashTickets(w http.ResponseWriter, r *http.Request) error {
	l := lang(r)
	st := r.URL.Query().Get("state")
	v := listView{Columns: []string{"dash.col.ticket", "dash.col.coupon", "dash.col.product", "dash.col.valid", "dash.col.status"},
		States: []string{"", "valid", "invalidated"}, State: st}
	list, err := s.app.Tickets(r.Context(), dashPrincipal(r), app.TicketsRequest{ListRequest: listRequest(r), State: st})
	return dashList(s, w, r, "tickets", v, list, err, func(d app.TicketDetails) ([]cell, string) {
		t := d.Summary()
		status := web.T(l, "dash.valid")
		if !t.Valid {
			status = web.T(l, "dash.invalid")
		}
		return []cell{{Text: t.TicketID, Href: dashPath(r, "tickets", t.TicketID), Mono: true}, {Text: t.CouponID, Href: "/c/" + t.CouponID, Mono: true},
			{Text: t.ProductName}, {Text: s.ts(l, t.ValidFrom) + " – " + s.ts(l, t.ValidUntil)}, {Text: status}}, t.TicketID
	})
}

func (s *Server) dashSubscriptions(w http.ResponseWriter, r *http.Request) error {
	l := lang(r)
	st := r.URL.Query().Get("state")
	v := listView{Columns: []string{"dash.col.subscription", "dash.col.product", "dash.col.active", "dash.col.cycle", "dash.col.ordered", "dash.col.ends"},
		States: []string{"", "active", "cancelled", "ended", "restored"}, State: st}
	list, err := s.app.Subscriptions(r.Context(), dashPrincipal(r), app.SubscriptionsRequest{ListRequest: listRequest(r), State: st})
	return dashList(s, w, r, "subscriptions", v, list, err, func(x app.SubscriptionJSON) ([]cell, string) {
		cycle := "—"
		if x.CurrentCycleValidFrom != nil && x.CurrentCycleValidUntil != nil {
			cycle = s.ts(l, time.Time(*x.CurrentCycleValidFrom)) + " – " + s.ts(l, time.Time(*x.CurrentCycleValidUntil))
		}
		ordered, ends := "—", "—"
		if x.OrderedUntil != nil {
			ordered = s.ts(l, time.Time(*x.OrderedUntil))
		}
		if x.EndsAt != nil {
			ends = s.ts(l, time.Time(*x.EndsAt))
		}
		return []cell{{Text: x.ID, Mono: true}, {Text: s.productName(x.CurrentSubscriptionCycle.ProductID)}, {Text: yesNo(l, x.Active)},
			{Text: cycle}, {Text: ordered}, {Text: ends}}, x.ID
	})
}

func (s *Server) dashInvoices(w http.ResponseWriter, r *http.Request) error {
	l, num := lang(r), r.URL.Query().Get("number")
	req := invoices.InvoicesRequest{ListRequest: listRequest(r)}
	if num != "" {
		req.Number = &num
	}
	v := listView{Columns: []string{"dash.col.number", "dash.col.kind", "dash.col.issued", "dash.col.total", "dash.col.files", "dash.col.delivery"},
		Search: "number", SearchLabel: "dash.search.number", Query: num}
	list, err := s.Invoices.Invoices(r.Context(), dashPrincipal(r), req)
	return dashList(s, w, r, "invoices", v, list, err, func(inv invoices.InvoiceJSON) ([]cell, string) {
		row := []cell{{Text: inv.InvoiceNumber, Href: dashPath(r, "invoices", inv.InvoiceID), Mono: true}, {Text: web.T(l, "dash.kind."+inv.Kind)},
			{Text: inv.IssueDate}, {Text: amount(l, inv.Totals.GrossAmountInCents.Decimal(), inv.Currency)}, invoiceFiles(inv)}
		row = append(row, cell{Text: web.T(lang(r), "dash.deliveries"), Href: "/dashboard/" + r.PathValue("env") + "/invoices/" + inv.InvoiceID + "/deliveries"})
		return row, inv.InvoiceID
	})
}

func (s *Server) dashCustomers(w http.ResponseWriter, r *http.Request) error {
	l := lang(r)
	v := listView{Columns: []string{"dash.col.customer", "dash.col.address", "dash.col.einvoicing", "dash.col.created"}}
	list, err := s.Invoices.Customers(r.Context(), dashPrincipal(r), listRequest(r))
	return dashList(s, w, r, "customers", v, list, err, func(c invoices.CustomerJSON) ([]cell, string) {
		// The customer by name (the address's first line), its id below.
		name, rest := "—", c.AddressLines
		if len(rest) > 0 {
			name, rest = rest[0], rest[1:]
		}
		return []cell{{Text: name, Sub: c.ID}, {Text: strings.Join(rest, ", ")}, {Text: yesNo(l, c.ElectronicInvoicing != nil)},
			s.createdCell(l, c.CreatedAt)}, c.ID
	})
}

// keysPage shows the account's keys of the page's environment.
func (s *Server) keysPage(w http.ResponseWriter, r *http.Request, status int, p web.Page) error {
	pr := dashPrincipal(r)
	keys, err := s.Accounts.DashboardKeys(r.Context(), pr.AccountID, pr.Environment)
	return s.dashDataPage(w, r, status, "dash_keys", "keys", p, keys, err)
}

// dashDataPage renders the page name with data, or returns err.
func (s *Server) dashDataPage(w http.ResponseWriter, r *http.Request, status int, name, nav string, p web.Page, data any, err error) error {
	if err != nil {
		return err
	}
	p.Data = data
	return s.dashRender(w, r, status, name, nav, p)
}

func (s *Server) dashKeys(w http.ResponseWriter, r *http.Request) error {
	return s.keysPage(w, r, http.StatusOK, web.Page{})
}

// dashCreateKey makes a key of the page's environment, shown once on the
// key page after the redirect.
func (s *Server) dashCreateKey(w http.ResponseWriter, r *http.Request) error {
	pr := dashPrincipal(r)
	k, err := s.Accounts.CreateKey(r.Context(), claimOf(r), pr.AccountID, pr.Environment)
	if err != nil {
		return err
	}
	return s.showOnce(w, r, web.T(lang(r), "admin.key.created", string(pr.Environment), k.Secret), "/dashboard/"+string(pr.Environment)+"/keys")
}

func (s *Server) dashRevokeKey(w http.ResponseWriter, r *http.Request) error {
	pr := dashPrincipal(r)
	if err := s.Accounts.RevokeDashboardKey(r.Context(), claimOf(r), pr.AccountID, pr.Environment, r.PathValue("key_id")); err != nil {
		return err
	}
	return s.keysPage(w, r, http.StatusOK, web.Page{Notice: web.T(lang(r), "admin.key.done", 1)})
}

// usersPage lists the account's dashboard users (the same in both
// environments).
func (s *Server) usersPage(w http.ResponseWriter, r *http.Request, status int, p web.Page) error {
	users, err := s.WebUsers.DashboardUsers(r.Context(), state(r).dashboard.AccountID)
	return s.dashDataPage(w, r, status, "dash_users", "users", p, users, err)
}

func (s *Server) dashUsers(w http.ResponseWriter, r *http.Request) error {
	return s.usersPage(w, r, http.StatusOK, web.Page{})
}

// dashRemoveUser removes a user of the session's account (its sessions end
// at once); never the account's last user (409 on the page). A user who
// removes itself is signed out.
func (s *Server) dashRemoveUser(w http.ResponseWriter, r *http.Request) error {
	sess := state(r).dashboard
	email := r.PostForm.Get("email")
	err := s.WebUsers.RemoveDashboardUserBy(r.Context(), claimOf(r), *sess, email)
	switch k := apperr.KindOf(err); {
	case err == nil:
	case k == apperr.Invalid || k == apperr.NotFound || k == apperr.Conflict:
		return s.usersPage(w, r, statusOf(k), web.Page{Error: apperr.As(err).Msg})
	default:
		return err
	}
	if strings.EqualFold(strings.TrimSpace(email), sess.Subject) {
		http.SetCookie(w, web.NewCookie(sessionCookie(r), "", s.secure(r), -1))
		http.Redirect(w, r, "/dashboard/sign-in", http.StatusSeeOther)
		return nil
	}
	return s.usersPage(w, r, http.StatusOK, web.Page{Notice: web.T(lang(r), "dash.users.removed", email)})
}
