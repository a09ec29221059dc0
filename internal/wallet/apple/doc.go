// Package apple builds signed Apple Wallet passes (.pkpass) for farebox
// tickets: a boardingPass with transitType PKTransitTypeGeneric, the product,
// validity, passenger and a binary Aztec barcode (ISO-8859-1 message), German
// and English strings, generated icon and logo images, manifest.json with
// SHA-1 of every file and a detached CMS signature (SHA-256, signingTime, the
// WWDR intermediate embedded).
//
// Credentials are the Pass Type ID certificate, its key and the WWDR
// certificate. Without them, LoadOrCreateDevelopment generates a chain shaped
// like Apple's; such passes verify with OpenSSL against the development root
// but real devices refuse them.
//
// Limits: no Wallet web service (webServiceURL/APNs updates), so voided or
// changed passes reach a device only when fetched again; no .p12 reading
// (convert once to PEM); images are simple generated glyphs.
package apple
