// Package apitest runs a real farebox HTTP server on 127.0.0.1:0 over a
// fresh database (SQLite or PostgreSQL) and talks to it the way a partner
// backend or a phone SDK would. Every response is validated against
// api/openapi.yaml, so API tests double as contract tests of the document.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	clearingapp "github.com/farebox/farebox/internal/app/clearing"
	"github.com/farebox/farebox/internal/app/fares"
	"github.com/farebox/farebox/internal/clearing"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/api"
	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/accounts"
	"github.com/farebox/farebox/internal/app/billing"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/app/console"
	"github.com/farebox/farebox/internal/app/deliveries"
	"github.com/farebox/farebox/internal/app/devices"
	"github.com/farebox/farebox/internal/app/events"
	"github.com/farebox/farebox/internal/app/invoicedelivery"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/app/privacy"
	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/app/records"
	"github.com/farebox/farebox/internal/app/testclock"
	"github.com/farebox/farebox/internal/app/transit"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/app/webhooks"
	"github.com/farebox/farebox/internal/app/webusers"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/config/configtest"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/invoicedoc/pdf"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/usage"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Env is one running server with its database and clock.
type Env struct {
	T     testing.TB
	URL   string
	Store *store.Store
	App   *app.App
	Feeds *transit.Feeds // the stored GTFS feeds (package transit)
	// Products is the catalog (package products).
	Products *products.Service
	// Console is what the operator console lists and changes.
	Console *console.Service
	// Privacy runs the retention job and exports and erases personal data.
	Privacy *privacy.Service
	// WebUsers are the operator and dashboard users and their sessions.
	WebUsers *webusers.Service
	// Accounts creates accounts and keys (package accounts).
	Accounts *accounts.Service
	// Events lists the events and runs their maintenance (package events).
	Events *events.Service
	// Webhooks are the webhook endpoints and deliveries (package webhooks).
	Webhooks *webhooks.Service
	// Records are the inspectors and inspection records (package records).
	Records *records.Service
	// Wallets runs the pass-update jobs: the server's Deps.Wallets when
	// Configure gave it wallets (Wallets), else wallets of zero Options
	// that the server does not serve (tickets carry no barcode).
	Wallets *wallets.Service
	// Invoices is invoicing (package invoices); Books the audit log,
	// receipts and verify (package books).
	Invoices *invoices.Service
	Books    *books.Books
	// PDF is the server's queue at the PDF renderer (Options.PDF), which
	// its invoices and books render through, as serve's.
	PDF    *pdf.Queue
	Clock  *clocktest.Fixed
	Server *httpapi.Server
	Ledger *usage.Ledger
	// LiveKey and TestKey belong to one account (AccountID) in each environment.
	AccountID string
	LiveKey   string
	TestKey   string
	client    *http.Client
}

// Options tune New.
type Options struct {
	// Now is the initial clock time (default 2026-06-15T10:00:00Z).
	Now time.Time
	// NoLedger disables the usage ledger.
	NoLedger bool
	// Configure runs before the server is built, to add dependencies.
	Configure func(d *httpapi.Deps)
	// Workers starts that many background job workers (0: none; tests then
	// run jobs deterministically with e.App.Jobs.RunOnce).
	Workers int
	// Webhooks configures webhook deliveries (docs/webhooks.md).
	Webhooks webhooks.Options
	// PDF limits the server's queue at the PDF renderer (serve's
	// --pdf-queue, --pdf-deadline); zero: pdf.DefaultLimits.
	PDF pdf.Limits
	// Transports deliver documents to their buyers (invoicedelivery.EmailOver
	// a test relay); none: nothing is sent.
	Transports []invoicedelivery.Transport
}

// Default start instant of the test clock.
var DefaultNow = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// New starts a server on engine and creates one account with a live and a test key.
func New(t testing.TB, engine store.Engine, o Options) *Env {
	t.Helper()
	s := storetest.Open(t, engine)
	return NewOnStore(t, s, o)
}

// NewOnStore starts a server on an existing store (several servers may share one).
func NewOnStore(t testing.TB, s *store.Store, o Options) *Env {
	t.Helper()
	if o.Now.IsZero() {
		o.Now = DefaultNow
	}
	clk := clocktest.NewFixed(o.Now)
	ts := httptest.NewUnstartedServer(nil)
	defaults := configtest.Defaults()
	links := kit.NewLinks("http://" + ts.Listener.Addr().String())
	if o.PDF == (pdf.Limits{}) {
		o.PDF = pdf.DefaultLimits
	}
	renderer := pdf.NewQueue(o.PDF)
	bk := books.New(store.NewView[books.Queries](s), clk, "farebox", defaults.Seller, links, renderer)
	prods := products.New(store.NewView[products.Queries](s), clk, "farebox")
	a := app.New(app.Options{Store: s, Clock: clk, IDPrefix: "farebox", Products: prods, Books: bk})
	inv := invoices.New(store.NewView[invoices.Queries](s), clk, "farebox", invoices.Options{Seller: defaults.Seller, Links: links,
		PaymentDays: defaults.PaymentDays, Books: bk, Events: app.EventWriter[invoices.Queries](a), Notify: a.Jobs.Notify,
		Channels: invoicedelivery.Channels(o.Transports), PDF: renderer})
	inv.Handle(a.Jobs)
	del := invoicedelivery.New(store.NewView[invoicedelivery.Queries](s), clk, "farebox", invoicedelivery.Options{Transports: o.Transports,
		Files: inv.EnsureFiles, Events: app.EventWriter[invoicedelivery.Queries](a), Notify: a.Jobs.Notify})
	del.Handle(a.Jobs)
	keys := accounts.New(store.NewView[accounts.Queries](s), clk, "farebox", 0)
	o.Webhooks.Jobs, o.Webhooks.Queue = a.Jobs, s.JobsOf(deliveries.JobDeliver)
	ev := events.New(store.NewView[events.Queries](s), clk, s.SettledEventSeq, a.EndSubscriptions)
	hooks := webhooks.New(store.NewView[webhooks.Queries](s), clk, "farebox", ev, a.Deliveries(), o.Webhooks)
	d := httpapi.Deps{App: a, Accounts: keys, Products: prods, Invoices: inv, Delivery: del, Books: bk, Console: console.New(store.NewView[console.Queries](s), clk, prods.Catalog, a.Jobs.Notify), Billing: billing.New(s.Read(), clk), WebUsers: webusers.New(store.NewView[webusers.Queries](s), clk, "farebox"), Feeds: transit.NewFeeds(store.NewView[transit.Queries](s), clk, "farebox"),
		TestClocks: testclock.New(store.NewView[testclock.Queries](s), clk, "farebox", a.Jobs.Notify), MaxBodyBytes: 64 << 10,
		Events: ev, Webhooks: hooks, Records: records.New(store.NewView[records.Queries](s), clk, "farebox")}
	d.Clearing = clearingapp.New(store.NewView[clearingapp.Queries](s), clk, "farebox", a.Loc, defaults.Seller.Name,
		func() []string { return clearing.National(prods.Catalog().File().Products) })
	d.Privacy = privacy.New(store.NewView[privacy.Queries](s), clk, privacy.Options{Location: a.Loc}, privacy.NewTx(s.WriteClaimed, a.TxWork))
	e := &Env{T: t, Store: s, App: a, Wallets: walletsOn(s, clk, a, wallets.Options{}), Products: prods, Privacy: d.Privacy, Invoices: inv, Books: bk, PDF: renderer, Console: d.Console, WebUsers: d.WebUsers, Feeds: d.Feeds, Accounts: keys, Events: ev, Webhooks: hooks, Records: d.Records, Clock: clk, client: &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	if !o.NoLedger {
		e.Ledger = s.NewLedger(store.LedgerCommitted, nil)
		d.Ledger = e.Ledger
	}
	if o.Configure != nil {
		configuring.Store(a, e)
		o.Configure(&d)
		configuring.Delete(a)
	}
	if d.Wallets != nil {
		e.Wallets = d.Wallets
	}
	if d.Fares == nil {
		d.Fares = fares.New(prods.Loaded, feedStations(d.Transit), "farebox", defaults.Seller.Name, clk)
	}
	if d.Devices == nil {
		d.Devices = devices.New(store.NewView[devices.Queries](s), clk, "farebox", devices.Options{Ticket: a.Ticket, Offers: e.Wallets.Offer,
			Events: app.EventWriter[devices.Queries](a)})
	}
	if err := prods.Load(context.Background()); err != nil {
		t.Fatalf("apitest: load catalog: %v", err)
	}
	e.Server = httpapi.New(d)
	ts.Config.Handler = e.Server
	ts.Start()
	stopWorkers := func() {}
	if o.Workers > 0 {
		wctx, cancel := context.WithCancel(context.Background())
		a.Jobs.Start(wctx, o.Workers)
		stopWorkers = func() { cancel(); a.Jobs.Wait() }
	}
	t.Cleanup(func() {
		stopWorkers()
		ts.Close()
		if e.Ledger != nil {
			e.Ledger.Close()
		}
	})
	e.URL = ts.URL
	ctx := context.Background()
	k, err := keys.CreateAccount(ctx, idempotency.Claim{}, "Partner GmbH", account.Live)
	if err != nil {
		t.Fatalf("apitest: create account: %v", err)
	}
	e.AccountID, e.LiveKey = k.AccountID, k.Secret
	tk, err := keys.CreateKey(ctx, idempotency.Claim{}, k.AccountID, account.Test)
	if err != nil {
		t.Fatalf("apitest: create test key: %v", err)
	}
	e.TestKey = tk.Secret
	return e
}

// ForEachEngine runs fn in parallel subtests on SQLite and PostgreSQL.
func ForEachEngine(t *testing.T, o Options, fn func(t *testing.T, e *Env)) {
	t.Helper()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) { fn(t, New(t, engine, o)) })
}

// FuzzEngine is the engine a fuzz target's server runs on: the one named
// by FAREBOX_FUZZ_ENGINE ("sqlite", the default, or "postgres"). A fuzz
// target can call f.Fuzz only once, so CI runs each database-backed target
// once per engine (.ci/run); an unknown name fails the target.
func FuzzEngine(f *testing.F) store.Engine {
	f.Helper()
	switch v := os.Getenv("FAREBOX_FUZZ_ENGINE"); v {
	case "", string(store.SQLite):
		return store.SQLite
	case string(store.Postgres):
		return store.Postgres
	default:
		f.Fatalf("apitest: FAREBOX_FUZZ_ENGINE=%q: want %q or %q", v, store.SQLite, store.Postgres)
		return ""
	}
}

// NewAccount creates another account and returns its id and key.
func (e *Env) NewAccount(name string, env account.Environment) (string, string) {
	e.T.Helper()
	k, err := e.Accounts.CreateAccount(context.Background(), idempotency.Claim{}, name, env)
	if err != nil {
		e.T.Fatalf("apitest: create account: %v", err)
	}
	return k.AccountID, k.Secret
}

// Req is one request.
type Req struct {
	Method string
	Path   string
	// Body is sent as is when string or []byte, JSON-encoded otherwise.
	Body any
	// Key is sent as Authorization: Bearer.
	Key    string
	Header map[string]string
	// NoValidate skips OpenAPI response validation (for deliberately broken requests
	// the document cannot describe, such as unknown paths).
	NoValidate bool
}

// Resp is a response with its body read.
type Resp struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test on error.
func (r *Resp) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Map decodes the body as a JSON object.
func (r *Resp) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Do sends req and validates the response against the OpenAPI document.
func (e *Env) Do(req Req) *Resp {
	e.T.Helper()
	var body io.Reader
	var sent []byte
	switch b := req.Body.(type) {
	case nil:
	case string:
		sent = []byte(b)
	case []byte:
		sent = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.T.Fatalf("apitest: encode body: %v", err)
		}
		sent = j
	}
	if req.Body != nil {
		body = bytes.NewReader(sent)
	}
	hr, err := http.NewRequest(req.Method, e.URL+req.Path, body)
	if err != nil {
		e.T.Fatalf("apitest: %v", err)
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.Key != "" {
		hr.Header.Set("Authorization", "Bearer "+req.Key)
	}
	for k, v := range req.Header {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	res, err := e.client.Do(hr)
	if err != nil {
		e.T.Fatalf("apitest: %s %s: %v", req.Method, req.Path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.T.Fatalf("apitest: read body: %v", err)
	}
	r := &Resp{Status: res.StatusCode, Header: res.Header, Body: b}
	if !req.NoValidate {
		if err := ValidateResponse(hr, r); err != nil {
			e.T.Errorf("%s %s → %d does not match api/openapi.yaml: %v\nbody: %.500s", req.Method, req.Path, r.Status, err, b)
		} else {
			record(hr, sent, r)
		}
	}
	return r
}

// Must is Do that fails the test unless the status is want.
func (e *Env) Must(want int, req Req) *Resp {
	e.T.Helper()
	r := e.Do(req)
	if r.Status != want {
		e.T.Fatalf("%s %s: status %d, want %d; body: %s", req.Method, req.Path, r.Status, want, r.Body)
	}
	return r
}

var (
	specOnce   sync.Once
	specRouter routers.Router
	specErr    error
)

// Spec loads and validates api/openapi.yaml once.
func Spec() (*openapi3.T, routers.Router, error) {
	var doc *openapi3.T
	specOnce.Do(func() {
		loader := openapi3.NewLoader()
		doc, specErr = loader.LoadFromData(api.YAML)
		if specErr != nil {
			return
		}
		if specErr = doc.Validate(context.Background()); specErr != nil {
			return
		}
		doc.Servers = nil // match any host
		specRouter, specErr = gorillamux.NewRouter(doc)
		specDoc = doc
	})
	return specDoc, specRouter, specErr
}

var specDoc *openapi3.T

func init() {
	openapi3filter.RegisterBodyDecoder("application/pdf", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/vnd.apple.pkpass", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/xml", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("image/png", openapi3filter.FileBodyDecoder)
}

// ValidateResponse checks one response against the document: the path and
// method must be described, the status listed, and the body must match.
func ValidateResponse(req *http.Request, r *Resp) error {
	_, router, err := Spec()
	if err != nil {
		return fmt.Errorf("api/openapi.yaml is invalid: %w", err)
	}
	rt, params, err := router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("route not in the document: %w", err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: rt,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	// JSON bodies are checked by validateJSONBody, against schemas compiled
	// once; openapi3filter checks the status, the headers and every other
	// body (PDF, XML, PNG, HTML: schemas of one line).
	mediaType := r.Header.Get("Content-Type")
	jsonBody := isJSON(mediaType) && req.Method != http.MethodHead
	if err := openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: r.Status, Header: r.Header, Body: io.NopCloser(bytes.NewReader(r.Body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, ExcludeResponseBody: jsonBody},
	}); err != nil {
		return err
	}
	if jsonBody {
		if err := checkContentType(rt.Operation, r.Status, mediaType); err != nil {
			return err
		}
		doc, _, _ := Spec()
		if err := validateJSONBody(doc, rt.Path, rt.Method, rt.Operation, r.Status, mediaType, r.Body); err != nil {
			return err
		}
	}
	return checkErrorCode(rt.Operation, rt.Method+" "+rt.Path, r)
}

// checkErrorCode holds an error answer to the codes its operation lists
// for its status in x-error-codes (a status the operation does not list,
// such as a 429 or 503 under `default`, is not checked).
func checkErrorCode(op *openapi3.Operation, where string, r *Resp) error {
	if r.Status < 400 {
		return nil
	}
	codes, _, err := ErrorCodes(op)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	status := fmt.Sprint(r.Status)
	listed, ok := codes[status]
	if !ok {
		return nil
	}
	var body struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		return fmt.Errorf("error body is not JSON: %w", err)
	}
	if !slices.Contains(listed, body.Code) {
		return fmt.Errorf("%s answered %d %q, which its x-error-codes[%q] %v does not list: add the code there, with an example (docs/openapi.md)",
			where, r.Status, body.Code, status, listed)
	}
	return nil
}

// UsageRows returns the ledger rows of the request with id (X-Request-Id).
func (e *Env) UsageRows(requestID string) []usage.Event {
	e.T.Helper()
	rows, err := e.Store.Read().UsageByRequest(context.Background(), requestID)
	if err != nil {
		e.T.Fatal(err)
	}
	return rows
}

// configuring maps the App of a server being configured (Options.Configure)
// to its Env, for Wallets.
var configuring sync.Map

// Wallets builds wallets of o for the server d is configuring (call it in
// Options.Configure: d.Wallets = apitest.Wallets(d, o)), on its database
// and clock, with their job handlers on its runner, as serve builds them.
func Wallets(d *httpapi.Deps, o wallets.Options) *wallets.Service {
	v, ok := configuring.Load(d.App)
	if !ok {
		panic("apitest.Wallets: call it in Options.Configure")
	}
	e := v.(*Env)
	return walletsOn(e.Store, e.Clock, d.App, o)
}

// walletsOn builds the wallets of o on s and registers their job handlers
// with a's runner. Zero Options still run the pass-update jobs: they tag
// passes, without pushes or Google calls.
func walletsOn(s *store.Store, clk *clocktest.Fixed, a *app.App, o wallets.Options) *wallets.Service {
	w := wallets.New(store.NewView[wallets.Queries](s), clk, a.Ticket, o)
	w.HandleJobs(a.Jobs)
	return w
}

// feedStations are the stations of tr's loaded feeds for the fare export
// (nil: no transit on this server).
func feedStations(tr *transit.Service) fares.Stations {
	if tr == nil {
		return nil
	}
	return func(id string) (fares.Feed, error) {
		f, err := tr.FeedStations(id)
		return fares.Feed(f), err
	}
}
