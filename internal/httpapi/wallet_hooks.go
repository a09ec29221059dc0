package httpapi

import "github.com/farebox/farebox/internal/app"

// The wallet and engine wiring (issue 8) fills these in: until passes can
// be built, a ticket offers no wallet rendering option.

// engineVersion is the rendering engine version tickets require.
func (s *Server) engineVersion() string { return "1.0.0" }

// renderingOptions lists the wallets a pass can be built for.
func (s *Server) renderingOptions(d app.TicketDetails) []string { return []string{} }

// ticketProperties adds inspection data (the signed barcode) to ticket.properties.
func (s *Server) ticketProperties(d app.TicketDetails) map[string]any { return nil }
