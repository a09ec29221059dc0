package httpapi

import (
	"fmt"
	"net/http"
	"reflect"
	"runtime"
	"strings"

	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/app/privacy"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/web"
)

// This file is the whole HTTP surface of farebox, one row per route: what
// the route is, how it authenticates, whom its requests are billed to and
// which handler answers. api/openapi.yaml describes exactly these paths
// (TestOpenAPIMatchesRoutes); testdata/routes.golden lists every row after
// the version loop has run (TestRouteGolden; regenerate it with
// `go test ./internal/httpapi -run TestRouteGolden -update`).

// authMode says how a route authenticates (decisions.md "Authentication").
type authMode int

const (
	authNone       authMode = iota // health, metrics, OpenAPI, engines, downloads: no key
	authPartner                    // Authorization: Bearer required; unknown JSON fields rejected
	authTransit                    // Bearer or api_key query parameter
	authCapability                 // no key: the coupon or ticket id is the credential; Bearer ignored
	authOperator                   // the operator console's session cookie (web pages, docs/web.md)
	authDashboard                  // a partner dashboard user's session cookie (dashboard.go)
	authInspector                  // an inspection device's Bearer token (inspections.go, docs/records.md)
)

// billing says whom a route's requests are billed to in the usage ledger
// (docs/operations.md "Billing"). The pipeline attributes the request
// before the handler runs (pipeline.go attribute), so no handler can forget
// to; New refuses a row whose billing does not fit its auth mode.
type billing int

const (
	billNobody  billing = iota // public documents: there is no account to bill
	billKey                    // the account of the request's API key
	billCoupon                 // the account owning the coupon in {coupon_id}
	billTicket                 // the account owning the ticket in {ticket_id}
	billInvoice                // the account owning the invoice document {invoice_id}/{identifier}
)

// handlerFunc is a route handler; a returned error becomes the JSON error response.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// route is one row of the route table.
type route struct {
	method string
	path   string // OpenAPI path template, e.g. /v6/ticketing/coupons/{coupon_id}.json
	auth   authMode
	bill   billing
	h      handlerFunc
}

// Version prefixes (decisions.md "Versions"). The SDK versions share one
// surface; the version number reaches the handlers that answer differently.
var ticketingVersions = []string{"/v6", "/v7", "/v8", "/v9"}

// routes is the route table.
func (s *Server) routes() []route {
	const (
		GET    = http.MethodGet
		POST   = http.MethodPost
		PUT    = http.MethodPut
		PATCH  = http.MethodPatch
		DELETE = http.MethodDelete
	)
	rs := []route{
		// Operations.
		{GET, "/healthz", authNone, billNobody, s.healthz},
		{GET, "/readyz", authNone, billNobody, s.readyz},
		{GET, "/metrics", authNone, billNobody, s.metrics},
		{GET, "/openapi.json", authNone, billNobody, s.openapi},

		// Account self-service (v1).
		{GET, "/v1/account.json", authPartner, billKey, s.getAccount},
		{GET, "/v1/usage.json", authPartner, billKey, s.getUsage},
		{GET, "/v1/events.json", authPartner, billKey, s.getEvents},
		// Personal data: export and erasure on request (docs/privacy.md).
		{GET, "/v1/privacy/coupons/{coupon_id}.json", authPartner, billKey, s.exportPersonalData(privacy.SubjectCoupon, "coupon_id")},
		{POST, "/v1/privacy/coupons/{coupon_id}/erasure.json", authPartner, billKey, s.erasePersonalData(privacy.SubjectCoupon, "coupon_id")},
		{GET, "/v1/privacy/subscriptions/{subscription_id}.json", authPartner, billKey, s.exportPersonalData(privacy.SubjectSubscription, "subscription_id")},
		{POST, "/v1/privacy/subscriptions/{subscription_id}/erasure.json", authPartner, billKey, s.erasePersonalData(privacy.SubjectSubscription, "subscription_id")},
		{GET, "/v1/privacy/customers/{customer_id}.json", authPartner, billKey, s.exportPersonalData(privacy.SubjectCustomer, "customer_id")},
		{POST, "/v1/privacy/customers/{customer_id}/erasure.json", authPartner, billKey, s.erasePersonalData(privacy.SubjectCustomer, "customer_id")},

		// Webhook endpoints (docs/webhooks.md).
		{POST, "/v1/webhook_endpoints.json", authPartner, billKey, s.createWebhookEndpoint},
		{GET, "/v1/webhook_endpoints.json", authPartner, billKey, s.getWebhookEndpoints},
		{GET, "/v1/webhook_endpoints/{endpoint_id}.json", authPartner, billKey, s.getWebhookEndpoint},
		{PATCH, "/v1/webhook_endpoints/{endpoint_id}.json", authPartner, billKey, s.updateWebhookEndpoint},
		{DELETE, "/v1/webhook_endpoints/{endpoint_id}.json", authPartner, billKey, s.deleteWebhookEndpoint},
		{POST, "/v1/webhook_endpoints/{endpoint_id}/rotate_secret.json", authPartner, billKey, s.rotateWebhookSecret},
		{GET, "/v1/webhook_endpoints/{endpoint_id}/attempts.json", authPartner, billKey, s.getWebhookAttempts},
		{POST, "/v1/webhook_endpoints/{endpoint_id}/redeliver.json", authPartner, billKey, s.redeliverWebhook},
		// Test clocks (docs/test-clocks.md), test keys only.
		{POST, "/v1/test_clocks.json", authPartner, billKey, s.createTestClock},
		{GET, "/v1/test_clocks.json", authPartner, billKey, s.getTestClocks},
		{GET, "/v1/test_clocks/{test_clock_id}.json", authPartner, billKey, s.getTestClock},
		{POST, "/v1/test_clocks/{test_clock_id}/advance.json", authPartner, billKey, s.advanceTestClock},
		{DELETE, "/v1/test_clocks/{test_clock_id}.json", authPartner, billKey, s.deleteTestClock},

		// Catalog (v2).
		{GET, "/v2/products/search_by_city_name.json", authPartner, billKey, s.searchByCityName},
		{GET, "/v2/products/search_by_coordinates.json", authPartner, billKey, s.searchByCoordinates},
		{GET, "/v2/products/search_by_bounding_box.json", authPartner, billKey, s.searchByBoundingBox},
		{GET, "/v2/areas/{area_id}.json", authPartner, billKey, s.getArea},

		// Orders on /v2 as well as on the SDK versions below.
		{POST, "/v2/ticketing/orders.json", authPartner, billKey, s.placeOrder(2)},
		{GET, "/v2/ticketing/orders/{order_id}.json", authPartner, billKey, s.getOrder(2)},
	}
	for i, v := range ticketingVersions {
		n := 6 + i
		rs = append(rs, []route{
			// Orders, products, coupons, tickets and subscriptions.
			{POST, v + "/ticketing/orders.json", authPartner, billKey, s.placeOrder(n)},
			{GET, v + "/ticketing/orders/{order_id}.json", authPartner, billKey, s.getOrder(n)},
			{POST, v + "/ticketing/orders/{order_id}/restore.json", authPartner, billKey, s.restoreOrder(n)},
			{GET, v + "/ticketing/products/{product_id}.json", authCapability, billNobody, s.getProduct},
			{GET, v + "/ticketing/coupons/{coupon_id}.json", authCapability, billCoupon, s.getCoupon(n)},
			{POST, v + "/ticketing/coupons/{coupon_id}/activate.json", authCapability, billCoupon, s.activateCoupon(n)},
			{POST, v + "/ticketing/coupons/{coupon_id}/tariff_settings.json", authCapability, billCoupon, s.setTariffSettings(n)},
			{PATCH, v + "/ticketing/tickets/{ticket_id}.json", authCapability, billTicket, s.getTicket(n)},
			{GET, v + "/ticketing/tickets/{ticket_id}/available_rendering_options.json", authCapability, billTicket, s.renderingOptionsHandler},
			{POST, v + "/ticketing/tickets/{ticket_id}/device.json", authCapability, billTicket, s.bindDevice},
			{GET, v + "/ticketing/subscriptions/{subscription_id}.json", authPartner, billKey, s.getSubscription},
			{POST, v + "/ticketing/subscriptions/{subscription_id}/reorder.json", authPartner, billKey, s.reorderSubscription},
			{DELETE, v + "/ticketing/subscriptions/{subscription_id}.json", authPartner, billKey, s.cancelSubscription},

			// Wallet passes and the HTML engines (docs/wallet.md).
			{GET, v + "/ticketing/passes/apple_wallet/{ticket_id}.pkpass", authCapability, billTicket, s.applePass},
			{GET, v + "/ticketing/passes/google_wallet/{ticket_id}", authCapability, billTicket, s.googlePassRedirect},
			{GET, v + "/ticketing/passes/google_wallet/{ticket_id}.json", authCapability, billTicket, s.googlePassLink},
			{GET, v + "/ticketing/rendering_engine/1", authNone, billNobody, s.engineRedirect(wallets.RenderingEngineName, v)},
			{GET, v + "/ticketing/rendering_engine/{major}/{minor}/{patch}", authNone, billNobody, s.engineDocument(wallets.RenderingEngineName)},
			{GET, v + "/ticketing/identification_view/1", authNone, billNobody, s.engineRedirect(wallets.IdentificationViewName, v)},
			{GET, v + "/ticketing/identification_view/{major}/{minor}/{patch}", authNone, billNobody, s.engineDocument(wallets.IdentificationViewName)},
		}...)
	}
	return append(rs, []route{
		// Lists (docs/lists.md), on /v9 only.
		{GET, "/v9/ticketing/orders.json", authPartner, billKey, s.getOrders},
		{GET, "/v9/ticketing/subscriptions.json", authPartner, billKey, s.getSubscriptions},
		{GET, "/v9/ticketing/coupons.json", authPartner, billKey, s.getCoupons},
		{GET, "/v9/ticketing/tickets.json", authPartner, billKey, s.getTickets},
		{GET, "/v9/ticketing/tickets/{ticket_id}/device_binding.json", authPartner, billKey, s.getDeviceBinding},
		{POST, "/v9/ticketing/tickets/{ticket_id}/device_move.json", authPartner, billKey, s.allowDeviceMove},

		// The books (docs/books.md): cancellation receipts, the audit log.
		{GET, "/v9/ticketing/subscriptions/{subscription_id}/cancellation_receipt.json", authPartner, billKey, s.getCancellationReceipt},
		{GET, "/v9/ticketing/subscriptions/{subscription_id}/cancellation_receipt.pdf", authPartner, billKey, s.getCancellationReceiptPDF},
		{GET, "/v9/ticketing/audit_log.json", authPartner, billKey, s.getAuditLog},
		// Its signed checkpoints with their keys, and proofs against them.
		{GET, "/v1/books/checkpoints.json", authPartner, billKey, s.getBooksCheckpoints},
		{GET, "/v1/books/proofs/inclusion.json", authPartner, billKey, s.getInclusionProof},
		{GET, "/v1/books/proofs/consistency.json", authPartner, billKey, s.getConsistencyProof},

		// Inspection keys (docs/wallet.md).
		{GET, "/v1/inspection/keys.json", authNone, billNobody, s.inspectionKeys},
		{GET, "/v1/inspection/revocations.json", authNone, billNobody, s.revocations},
		{GET, "/v1/inspection/blocklist.json", authNone, billNobody, s.blocklist},
		{POST, "/v1/inspection/records.json", authInspector, billNobody, s.postInspections},
		{POST, "/v1/inspection/sign-in.json", authNone, billNobody, s.inspectorSignIn},
		{GET, "/v1/inspection/rotating-secret.json", authInspector, billNobody, s.inspectionRotatingSecret},

		// Fares for journey planners and the national access point
		// (docs/fares.md): public, cacheable, limited per client.
		{GET, "/v1/fares/netex.xml", authNone, billNobody, s.getFaresNeTEx},
		{GET, "/v1/fares/gtfs-fares-v2.zip", authNone, billNobody, s.getFaresGTFS},

		// Apple's PassKit web service (docs/wallet.md, "Apple Wallet
		// updates"): called by Wallet on a device, keyless; billed to nobody
		// (the service's pushes cause these calls, not a partner's request).
		{POST, "/wallet/apple/v1/devices/{device_library_id}/registrations/{pass_type_id}/{serial_number}", authNone, billNobody, s.registerAppleDevice},
		{DELETE, "/wallet/apple/v1/devices/{device_library_id}/registrations/{pass_type_id}/{serial_number}", authNone, billNobody, s.unregisterAppleDevice},
		{GET, "/wallet/apple/v1/devices/{device_library_id}/registrations/{pass_type_id}", authNone, billNobody, s.updatedAppleSerials},
		{GET, "/wallet/apple/v1/passes/{pass_type_id}/{serial_number}", authNone, billNobody, s.latestApplePass},
		{POST, "/wallet/apple/v1/log", authNone, billNobody, s.appleLog},

		// Invoicing (docs/invoicing.md): customers, billable items,
		// collections and invoice creation on /v5; customers with electronic
		// invoicing, cancellations and payment notices on /v9.
		{POST, "/v5/ticketing/customers.json", authPartner, billKey, s.createCustomer(false)},
		{GET, "/v5/ticketing/customers/{customer_id}.json", authPartner, billKey, s.getCustomer},
		{POST, "/v9/ticketing/customers.json", authPartner, billKey, s.createCustomer(true)},
		{GET, "/v9/ticketing/customers/{customer_id}.json", authPartner, billKey, s.getCustomer},
		{GET, "/v9/ticketing/customers.json", authPartner, billKey, s.getCustomers},
		{GET, "/v5/ticketing/billable_item/{billable_item_id}.json", authPartner, billKey, s.getBillableItem},
		{PUT, "/v5/ticketing/billable_item/{billable_item_id}.json", authPartner, billKey, s.putBillableItem},
		{POST, "/v5/ticketing/billable_collections.json", authPartner, billKey, s.createCollection},
		{POST, "/v5/ticketing/billable_collection/{collection_id}/billable_items.json", authPartner, billKey, s.addToCollection},
		{POST, "/v5/ticketing/billable_item/{billable_item_id}/invoice.json", authPartner, billKey, s.createInvoice},
		{POST, "/v5/ticketing/billable_item/{billable_item_id}/invoice/{customer_id}.json", authPartner, billKey, s.createInvoice},
		{GET, "/v5/ticketing/invoices/{invoice_id}.json", authPartner, billKey, s.getInvoice},
		{GET, "/v9/ticketing/invoices.json", authPartner, billKey, s.getInvoices},
		{GET, "/v9/ticketing/billable_items.json", authPartner, billKey, s.getBillableItems},
		{GET, "/v9/ticketing/billable_collections.json", authPartner, billKey, s.getCollections},
		{POST, "/v9/ticketing/invoices/{invoice_id}/cancel.json", authPartner, billKey, s.cancelInvoice},
		{POST, "/v9/ticketing/invoices/{invoice_id}/payment_notice.json", authPartner, billKey, s.invoicePaymentNotice},
		{GET, "/v9/ticketing/invoices/{invoice_id}/deliveries.json", authPartner, billKey, s.getDeliveries},
		{POST, "/v9/ticketing/invoices/{invoice_id}/deliveries.json", authPartner, billKey, s.resendInvoice},
		{POST, "/v9/ticketing/billable_collection/{collection_id}/payment_notice.json", authPartner, billKey, s.collectionPaymentNotice},
		// Downloads: the identifier in the path is the credential.
		{GET, "/v9/ticketing/invoices/{invoice_id}/{identifier}.pdf", authNone, billInvoice, s.download(invoices.FormatPDF, ".pdf")},
		{GET, "/v9/ticketing/invoices/{invoice_id}/{identifier}.ubl.xml", authNone, billInvoice, s.download(invoices.FormatUBL, ".ubl.xml")},
		{GET, "/v9/ticketing/invoices/{invoice_id}/{identifier}.cii.xml", authNone, billInvoice, s.download(invoices.FormatCII, ".cii.xml")},

		// Transit (docs/departures.md): departures also under the /v3 and
		// /v4 aliases of the upstream docs; Bearer or api_key.
		{GET, "/v1/departures.json", authTransit, billKey, s.getDepartures},
		{GET, "/v3/transit/departures.json", authTransit, billKey, s.getDepartures},
		{GET, "/v4/transit/departures.json", authTransit, billKey, s.getDepartures},
		{GET, "/v1/stations/search_by_name.json", authTransit, billKey, s.searchStationsByName},
		{GET, "/v1/stations/search_by_position.json", authTransit, billKey, s.searchStationsByPosition},
		{GET, "/v1/stations/search_by_id.json", authTransit, billKey, s.searchStationByID},
		{GET, "/v1/trips/search_by_characteristics.json", authTransit, billKey, s.searchTripByCharacteristics},
		{GET, "/v1/trips/{trip_id}.json", authTransit, billKey, s.getTrip},
		{GET, "/v1/attributions.json", authTransit, billKey, s.getAttributions},
		// Vector tiles (docs/maps.md): every request counts.
		{GET, "/v1/station_map/{tile}.mvt", authTransit, billKey, s.getStationMapTile},
		{GET, "/v1/transit_map/{tile}.mvt", authTransit, billKey, s.getTransitMapTile},

		// Web pages (docs/web.md, pages.go): HTML, not in api/openapi.yaml
		// (isPage). The traveller page of a coupon is billed like the
		// coupon reads of the API; its POST activates.
		{GET, web.CSSPath, authNone, billNobody, s.webCSS},
		{GET, web.TravellerScriptPath, authNone, billNobody, s.travellerScript},
		{GET, web.TicketWorkerPath, authNone, billNobody, s.ticketWorker},
		{GET, web.DashboardScriptPath, authNone, billNobody, s.dashboardScript},
		// The inspector app (docs/inspect.md, inspect.go): the page and its files.
		{GET, "/inspect", authNone, billNobody, s.inspectPage},
		{GET, "/inspect/{file}", authNone, billNobody, s.inspectFile},
		{GET, "/c/{coupon_id}", authCapability, billCoupon, s.couponPage},
		{POST, "/c/{coupon_id}", authCapability, billCoupon, s.couponActivate},
		{GET, "/c/{coupon_id}/ticket", authCapability, billCoupon, s.couponTicket},
		// The operator console.
		{GET, "/admin/sign-in", authNone, billNobody, s.adminSignInForm},
		{POST, "/admin/sign-in", authNone, billNobody, s.adminSignIn},
		{POST, "/admin/sign-out", authOperator, billNobody, s.adminSignOut},
		{GET, "/admin", authOperator, billNobody, s.adminHome},
		{GET, "/admin/accounts", authOperator, billNobody, s.adminAccounts},
		{POST, "/admin/accounts/{account_id}/keys", authOperator, billNobody, s.adminCreateKey},
		{POST, "/admin/accounts/{account_id}/grants", authOperator, billNobody, s.adminGrant},
		{POST, "/admin/accounts/{account_id}/users/remove", authOperator, billNobody, s.adminRemoveUser},
		{POST, "/admin/keys/revoke", authOperator, billNobody, s.adminRevokeKey},
		{GET, "/admin/catalog", authOperator, billNobody, s.adminCatalog},
		{GET, "/admin/feeds", authOperator, billNobody, s.adminFeeds},
		{GET, "/admin/jobs", authOperator, billNobody, s.adminJobs},
		{POST, "/admin/jobs/{job_id}/retry", authOperator, billNobody, s.adminRetryJob},
		{GET, "/admin/inspection-keys", authOperator, billNobody, s.adminInspectionKeys},
		// The revenue clearing (docs/clearing.md): the page with the map,
		// and the operator API of a month's report and its verification.
		{GET, "/admin/clearing", authOperator, billNobody, s.adminClearing},
		{GET, "/admin/clearing/{month}/report.json", authOperator, billNobody, s.clearingReport("json")},
		{GET, "/admin/clearing/{month}/report.csv", authOperator, billNobody, s.clearingReport("csv")},
		{GET, "/admin/clearing/{month}/verify.json", authOperator, billNobody, s.clearingVerify},
		// The partner dashboard (dashboard.go): every page below
		// /dashboard/{env}/ shows that environment only.
		{GET, "/dashboard/sign-in", authNone, billNobody, s.dashSignInForm},
		{POST, "/dashboard/sign-in", authNone, billNobody, s.dashSignIn},
		{GET, "/dashboard/invite", authNone, billNobody, s.dashInviteForm},
		{POST, "/dashboard/invite", authNone, billNobody, s.dashAcceptInvite},
		{POST, "/dashboard/sign-out", authDashboard, billNobody, s.dashSignOut},
		{GET, "/dashboard", authDashboard, billNobody, s.dashHome},
		{GET, "/dashboard/{env}/usage", authDashboard, billNobody, s.dashUsage},
		{GET, "/dashboard/{env}/usage.csv", authDashboard, billNobody, s.dashUsageCSV},
		{GET, "/dashboard/{env}/orders", authDashboard, billNobody, s.dashOrders},
		{GET, "/dashboard/{env}/orders/{order_id}", authDashboard, billNobody, s.dashOrder},
		{GET, "/dashboard/{env}/coupons", authDashboard, billNobody, s.dashCoupons},
		{GET, "/dashboard/{env}/tickets", authDashboard, billNobody, s.dashTickets},
		{GET, "/dashboard/{env}/tickets/{ticket_id}", authDashboard, billNobody, s.dashTicket},
		{GET, "/dashboard/{env}/subscriptions", authDashboard, billNobody, s.dashSubscriptions},
		{GET, "/dashboard/{env}/invoices", authDashboard, billNobody, s.dashInvoices},
		{GET, "/dashboard/{env}/invoices/{invoice_id}", authDashboard, billNobody, s.dashInvoice},
		{GET, "/dashboard/{env}/invoices/{invoice_id}/deliveries", authDashboard, billNobody, s.dashDeliveries},
		{POST, "/dashboard/{env}/invoices/{invoice_id}/resend", authDashboard, billNobody, s.dashResendInvoice},
		{GET, "/dashboard/{env}/customers", authDashboard, billNobody, s.dashCustomers},
		{GET, "/dashboard/{env}/keys", authDashboard, billNobody, s.dashKeys},
		{POST, "/dashboard/{env}/keys", authDashboard, billNobody, s.dashCreateKey},
		{POST, "/dashboard/{env}/keys/{key_id}/revoke", authDashboard, billNobody, s.dashRevokeKey},
		{GET, "/dashboard/{env}/webhooks", authDashboard, billNobody, s.dashWebhooks},
		{POST, "/dashboard/{env}/webhooks", authDashboard, billNobody, s.dashCreateWebhook},
		{GET, "/dashboard/{env}/webhooks/{endpoint_id}", authDashboard, billNobody, s.dashWebhook},
		{POST, "/dashboard/{env}/webhooks/{endpoint_id}/enable", authDashboard, billNobody, s.dashEnableWebhook},
		{POST, "/dashboard/{env}/webhooks/{endpoint_id}/disable", authDashboard, billNobody, s.dashDisableWebhook},
		{POST, "/dashboard/{env}/webhooks/{endpoint_id}/rotate", authDashboard, billNobody, s.dashRotateWebhook},
		{POST, "/dashboard/{env}/webhooks/{endpoint_id}/delete", authDashboard, billNobody, s.dashDeleteWebhook},
		{POST, "/dashboard/{env}/webhooks/{endpoint_id}/redeliver", authDashboard, billNobody, s.dashRedeliverWebhook},
		{GET, "/dashboard/{env}/users", authDashboard, billNobody, s.dashUsers},
		{POST, "/dashboard/{env}/users/remove", authDashboard, billNobody, s.dashRemoveUser},
	}...)
}

// billParam is the path parameter naming the record a billing bills.
var billParam = map[billing]string{billCoupon: "coupon_id", billTicket: "ticket_id", billInvoice: "invoice_id"}

// check refuses a row whose billing does not fit its auth mode: a keyed
// route bills its key; a keyless one bills the record its path names, or
// nobody.
func (rt route) check() error {
	keyed := rt.auth == authPartner || rt.auth == authTransit
	switch {
	case keyed != (rt.bill == billKey):
		return fmt.Errorf("route %s %s: auth %d bills %d", rt.method, rt.path, rt.auth, rt.bill)
	case billParam[rt.bill] != "" && !strings.Contains(rt.path, "{"+billParam[rt.bill]+"}"):
		return fmt.Errorf("route %s %s bills the record in {%s}, which the path lacks", rt.method, rt.path, billParam[rt.bill])
	case rt.bill == billInvoice && !strings.Contains(rt.path, "{identifier}"):
		return fmt.Errorf("route %s %s bills an invoice document without its {identifier}", rt.method, rt.path)
	}
	return nil
}

// RouteInfo names one route of the table (for the OpenAPI contract test,
// the tenant-isolation and attribution tests, the golden file and docs).
type RouteInfo struct {
	Method, Path string
	// Auth is "none", "partner", "transit", "capability", "operator",
	// "dashboard" or "inspector".
	Auth string
	// Page: an HTML web page (docs/web.md), not part of the JSON API and
	// not in api/openapi.yaml.
	Page bool
	// Bills is whom a request is billed to: "nobody", "key", "coupon",
	// "ticket" or "invoice".
	Bills string
	// Handler is the name of the handler method, as the runtime knows it.
	Handler string
}

// Routes lists the route table.
func (s *Server) Routes() []RouteInfo {
	var out []RouteInfo
	for _, rt := range s.routes() {
		out = append(out, RouteInfo{Method: rt.method, Path: rt.path,
			Auth:    [...]string{"none", "partner", "transit", "capability", "operator", "dashboard", "inspector"}[rt.auth],
			Page:    isPage(rt.path),
			Bills:   [...]string{"nobody", "key", "coupon", "ticket", "invoice"}[rt.bill],
			Handler: handlerName(rt.h)})
	}
	return out
}

// handlerName is the method that makes h: "getCoupon" for the closure
// s.getCoupon(9) returns and for the method value s.getAccount. The runtime
// names them …(*Server).getCoupon.func2 (prefixed by the callers it was
// inlined into) and …(*Server).getAccount-fm.
func handlerName(h handlerFunc) string {
	name := strings.TrimSuffix(runtime.FuncForPC(reflect.ValueOf(h).Pointer()).Name(), "-fm")
	for {
		i := strings.LastIndexByte(name, '.')
		last := name[i+1:]
		if i < 0 || strings.Trim(strings.TrimPrefix(last, "func"), "0123456789") != "" {
			return last
		}
		name = name[:i] // a closure: func1, or a nested closure's 1
	}
}
