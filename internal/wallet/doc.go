// Package wallet is the platform-neutral model of a wallet pass: what a
// ticket shows (product, validity, passenger, environment, the signed
// inspection barcode, voided state), built from a TicketView that the HTTP
// layer fills from a stored ticket. Subpackages apple and google turn a Pass
// into an Apple Wallet .pkpass and a Google Wallet save link.
//
// RenderingOptions decides which wallet options a ticket advertises in
// available_rendering_options. Limits: passes are static; pushing updates to
// installed passes (Apple web service, Google REST API) is not implemented,
// so a voided or changed ticket reaches a device only when the pass is
// fetched again.
package wallet
