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
	}
	for range ticketingVersions {
		// Ticketing routes per version are added by the ticketing issues.
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
