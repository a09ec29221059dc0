// Package barcode builds and checks farebox's inspection barcode: a compact
// binary record describing one ticket (ticket and product, validity, passenger
// name and birth date, test or live) signed with Ed25519, carried in an Aztec
// code.
//
// The record layout (version 1) is documented in docs/wallet.md and in
// payload.go. Keys carry a numeric key id so they can rotate: a Keyring holds
// one active signing key (plus one for test tickets, ids from TestKeyIDBase)
// and any number of verification keys, and its public half is published as
// JSON for inspection apps.
//
// Limits: the payload is farebox's own format, not a VDV-KA or UIC 918
// barcode, so third-party inspection devices will not accept it. Times are
// whole seconds stored as unsigned 32-bit Unix time (until the year 2106).
// Text fields hold at most 255 bytes of UTF-8 each. A barcode is static: it
// can be copied (screenshots); revocation lists are outside this package.
package barcode
