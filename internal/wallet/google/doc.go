// Package google mints Google Wallet save links for farebox tickets:
// https://pay.google.com/gp/v/save/<JWT> with an RS256 JWT signed by a
// service-account key (header kid = private_key_id; claims iss, aud
// "google", typ "savetowallet", iat, origins) whose payload carries the
// ticket as a TransitObject (state, validity, passenger, Aztec barcode with
// the payload's base64url text form, TEST marker) and, when a logo URL is
// configured, the TransitClass.
//
// Limits: these are "fat" JWTs (no REST API calls), so the class must either
// travel in the JWT (needs a hosted https logo) or be created once in the
// console; objects cannot be updated after saving, and links are longer than
// Google's 1,800-character guidance for web links (they work for the Android
// SDK's save flow and redirects). A generated development service account
// yields well-formed links that Google rejects.
package google
