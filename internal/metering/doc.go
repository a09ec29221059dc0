// Package metering implements the session blocks of decisions.md
// ("Metering and sessions"): the first departure query for a station (or
// trip request for a trip id) is counted and opens a five-minute block; a
// later request for the same resource that presents a session token holding
// an unexpired block is not counted.
//
// The token is stateless, so any server instance can check it: it is the
// URL-safe base64 (no padding) of a version byte, up to MaxBlocks blocks
// (8 bytes of SHA-256 of the resource key and the opening time as Unix
// seconds) and a 16-byte HMAC-SHA256 tag over the account id and the blocks.
// Resource keys are hashed, so the token reveals neither stations nor
// trips. A forged, truncated, foreign (other account or key) or garbage
// token is treated as no token: never an error. Limits: opening times are
// 32-bit Unix seconds (until 2106); a block opened more than a minute in the
// future (clock skew between instances) is dropped.
package metering
