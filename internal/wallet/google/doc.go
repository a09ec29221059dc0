// Package google mints Google Wallet save links for farebox tickets:
// https://pay.google.com/gp/v/save/<JWT> with an RS256 JWT signed by a
// service-account key (header kid = private_key_id; claims iss, aud
// "google", typ "savetowallet", iat, origins) whose payload carries the
// ticket as a TransitObject (state, validity, passenger, Aztec barcode with
// the payload's base64url text form, TEST marker) and, when a logo URL is
// configured, the TransitClass.
//
// With the REST API (Client, api.go: walletobjects v1 with an OAuth2
// JWT-bearer access token of the same service account) the class and object
// are inserted first and the save JWT names only their ids ("skinny", about
// 900 characters); saved objects are patched when the ticket changes.
// Without it the JWT carries the whole object ("fat", 2,200–3,300
// characters, over Google's 1,800-character guidance for web links; they
// work for the Android SDK's save flow and redirects), the class must
// travel in it (needs a hosted https logo) or exist in the console, and
// saved objects never change. A generated development service account
// yields well-formed links that Google rejects; googletest is a local
// stand-in of the API for tests.
package google
