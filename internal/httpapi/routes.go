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
	for _, v := range ticketingVersions {
		rs = append(rs,
			route{http.MethodGet, v + "/ticketing/products/{product_id}.json", authCapability, s.getProduct},
		)
	}
	return rs
}

// RouteInfo names one route of the table (for the OpenAPI contract test and docs).
type RouteInfo struct{ Method, Path string }

// Routes lists the route table.
func (s *Server) Routes() []RouteInfo {
	var out []RouteInfo
	for _, rt := range s.routes() {
		out = append(out, RouteInfo{rt.method, rt.path})
	}
	return out
}
