// Package engines serves the two HTML engines the client SDKs load into a
// web view (client-contract.md section 6): the rendering engine
// (window.renderTicket) that draws the inspection view of a ticket, and the
// identification view (window.renderIdentificationView and friends) that
// renders the activation form from a product's schemas.
//
// Both pages are embedded, self-contained documents: CSS and JavaScript are
// inline, images are data: URIs, and a Content-Security-Policy forbids any
// network request. Each engine has a three-segment version (major.minor.patch)
// that must be bumped on every content change, because iOS downloads an
// engine only when the version in the redirect target compares newer.
// versions.txt records the SHA-256 of every released version; a test fails
// when the content changes without a new line there.
//
// BarcodeProperties produces the ticket.properties entries the rendering
// engine reads the inspection barcode from. Limits: the engine shows the
// pre-rendered Aztec PNG; it does not encode Aztec in JavaScript.
package engines
