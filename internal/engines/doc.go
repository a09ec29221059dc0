// Package engines serves the two HTML engines the client SDKs load into a
// web view (client-contract.md section 6): the rendering engine
// (window.renderTicket) that draws the inspection view of a ticket, and the
// identification view (window.renderIdentificationView and friends) that
// renders the activation form from a product's schemas.
//
// Both pages are embedded, self-contained documents: CSS and JavaScript are
// inline, images are data: URIs, and a Content-Security-Policy forbids any
// network request, except the rendering engine's bind call of a dynamic
// ticket (connect-src 'self' https:; docs/barcodes.md, "The engine"). Each
// engine has a three-segment version (major.minor.patch) that must be
// bumped on every content change, because iOS downloads an engine only
// when the version in the redirect target compares newer.
// versions.txt records the SHA-256 of every released version; a test fails
// when the content changes without a new line there.
//
// BarcodeProperties produces the ticket.properties entries the rendering
// engine reads the inspection barcode from. A static ticket shows the
// pre-rendered Aztec PNG; a dynamic one (PropDeviceBinding) is bound to a
// key the engine makes in the device, and the engine signs and draws its
// code every window with its own Aztec encoder (assets/aztec.js, binary
// data only, inlined at build). Limits: the engine needs WebCrypto and
// IndexedDB, which a web view loaded with an about:blank base (as the SDKs
// load it today) does not offer; it then says so and shows no code.
package engines
