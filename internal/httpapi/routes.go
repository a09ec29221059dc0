package httpapi

import "net/http"

// Version prefixes (decisions.md "Versions"). Each version's surface is
// registered explicitly so it stays greppable and can differ.
var (
	ticketingVersions = []string{"/v6", "/v7", "/v8", "/v9"}
)

// routes is the whole HTTP surface of farebox. api/openapi.yaml describes
// exactly these paths; TestOpenAPIMatchesRoutes keeps the two in step.
func (s *Server) routes() []route {
	rs := []route{
		// Operations.
		{http.MethodGet, "/healthz", authNone, s.healthz},
		{http.MethodGet, "/readyz", authNone, s.readyz},
		{http.MethodGet, "/metrics", authNone, s.metrics},
		{http.MethodGet, "/openapi.json", authNone, s.openapi},

		// Account self-service (v1).
		{http.MethodGet, "/v1/account.json", authPartner, s.getAccount},
		{http.MethodGet, "/v1/usage.json", authPartner, s.getUsage},

		// Catalog (v2).
		{http.MethodGet, "/v2/products/search_by_city_name.json", authPartner, s.searchByCityName},
		{http.MethodGet, "/v2/products/search_by_coordinates.json", authPartner, s.searchByCoordinates},
		{http.MethodGet, "/v2/products/search_by_bounding_box.json", authPartner, s.searchByBoundingBox},
		{http.MethodGet, "/v2/areas/{area_id}.json", authPartner, s.getArea},
	}
	// Orders on /v2 as well as the SDK versions (decisions.md "Versions").
	rs = append(rs, s.orderRoutes("/v2", 2)...)
	for i, v := range ticketingVersions {
		n := 6 + i
		rs = append(rs, s.orderRoutes(v, n)...)
		rs = append(rs,
			route{http.MethodGet, v + "/ticketing/products/{product_id}.json", authCapability, s.getProduct},
			route{http.MethodPost, v + "/ticketing/orders/{order_id}/restore.json", authPartner, s.restoreOrder(n)},
			route{http.MethodGet, v + "/ticketing/coupons/{coupon_id}.json", authCapability, s.getCoupon(n)},
			route{http.MethodPost, v + "/ticketing/coupons/{coupon_id}/activate.json", authCapability, s.activateCoupon(n)},
			route{http.MethodPost, v + "/ticketing/coupons/{coupon_id}/tariff_settings.json", authCapability, s.setTariffSettings(n)},
			route{http.MethodPatch, v + "/ticketing/tickets/{ticket_id}.json", authCapability, s.getTicket(n)},
			route{http.MethodGet, v + "/ticketing/tickets/{ticket_id}/available_rendering_options.json", authCapability, s.renderingOptionsHandler},
			route{http.MethodGet, v + "/ticketing/subscriptions/{subscription_id}.json", authPartner, s.getSubscription},
			route{http.MethodPost, v + "/ticketing/subscriptions/{subscription_id}/reorder.json", authPartner, s.reorderSubscription},
			route{http.MethodDelete, v + "/ticketing/subscriptions/{subscription_id}.json", authPartner, s.cancelSubscription},
		)
		// Wallet passes and the HTML engines (wallet.go).
		rs = append(rs, s.walletRoutes(v)...)
	}
	// Inspection keys (wallet.go).
	rs = append(rs, route{http.MethodGet, "/v1/inspection/keys.json", authNone, s.inspectionKeys})
	// Invoicing (/v5, /v9): customers, billable items, collections, invoices,
	// downloads, cancellations and payment notices.
	rs = append(rs, s.invoicingRoutes()...)
	// Transit (v1; departures also under the /v3 and /v4 aliases of the
	// upstream docs). Bearer or api_key; docs/departures.md.
	rs = append(rs,
		route{http.MethodGet, "/v1/departures.json", authTransit, s.getDepartures},
		route{http.MethodGet, "/v3/transit/departures.json", authTransit, s.getDepartures},
		route{http.MethodGet, "/v4/transit/departures.json", authTransit, s.getDepartures},
		route{http.MethodGet, "/v1/stations/search_by_name.json", authTransit, s.searchStationsByName},
		route{http.MethodGet, "/v1/stations/search_by_position.json", authTransit, s.searchStationsByPosition},
		route{http.MethodGet, "/v1/stations/search_by_id.json", authTransit, s.searchStationByID},
		route{http.MethodGet, "/v1/trips/search_by_characteristics.json", authTransit, s.searchTripByCharacteristics},
		route{http.MethodGet, "/v1/trips/{trip_id}.json", authTransit, s.getTrip},
		route{http.MethodGet, "/v1/attributions.json", authTransit, s.getAttributions},
	)
	return rs
}

// RouteInfo names one route of the table (for the OpenAPI contract test,
// the tenant-isolation test and docs). Auth is "none", "partner",
// "transit" or "capability".
type RouteInfo struct{ Method, Path, Auth string }

// Routes lists the route table.
func (s *Server) Routes() []RouteInfo {
	var out []RouteInfo
	for _, rt := range s.routes() {
		out = append(out, RouteInfo{rt.method, rt.path, [...]string{"none", "partner", "transit", "capability"}[rt.auth]})
	}
	return out
}

// orderRoutes are the order endpoints of one version prefix.
func (s *Server) orderRoutes(prefix string, version int) []route {
	return []route{
		{http.MethodPost, prefix + "/ticketing/orders.json", authPartner, s.placeOrder(version)},
		{http.MethodGet, prefix + "/ticketing/orders/{order_id}.json", authPartner, s.getOrder(version)},
	}
}
