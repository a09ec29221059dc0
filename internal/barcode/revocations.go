package barcode

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/farebox/farebox/internal/apperr"
)

// RevocationContext separates revocation feed signatures from barcode
// signatures made with the same inspection keys.
const RevocationContext = "farebox revocation feed\x00"

// Feed is the signed part of GET /v1/inspection/revocations.json: tickets
// that stopped being valid before their end, after sequence number Since,
// up to LastSeq (a device stores LastSeq and asks since=LastSeq next time).
type Feed struct {
	Version     int         `json:"version"`
	GeneratedAt string      `json:"generated_at"`
	Since       int64       `json:"since"`
	LastSeq     int64       `json:"last_seq"`
	Revocations []FeedEntry `json:"revocations"`
}

// FeedEntry is one revoked ticket, or one revoked inspection key (Kind
// "key", Kid set, no TicketID): every barcode signed with that key is
// invalid.
type FeedEntry struct {
	Seq        int64  `json:"seq"`
	TicketID   string `json:"ticket_id,omitempty"`
	Kid        string `json:"kid,omitempty"`
	Kind       string `json:"kind"` // "restored", "revoked" or "key"
	Reason     string `json:"reason"`
	RevokedAt  string `json:"revoked_at"`
	ValidUntil string `json:"valid_until"` // the entry is pruned after it
}

// FeedSignature is the detached signature next to the feed.
type FeedSignature struct {
	KeyID string `json:"kid"`
	Alg   string `json:"alg"` // "Ed25519"
	Sig   string `json:"sig"` // base64url, no padding, over RevocationContext + the feed's bytes
}

// SignFeed encodes f canonically (encoding/json, compact, fields in
// declaration order) and signs it with the active live key.
func SignFeed(f Feed, kr *Keyring) (body, sig []byte, key Key, err error) {
	if body, err = json.Marshal(f); err != nil {
		return nil, nil, Key{}, apperr.Wrap("barcode.SignFeed", err)
	}
	sig, key, err = SignDetached(RevocationContext, body, kr)
	return body, sig, key, err
}

// SignDetached signs context + body with the active live key (the
// revocation feed, the exported blocklists: docs/blocklist.md); context
// keeps a signature of one document from passing for another's.
func SignDetached(context string, body []byte, kr *Keyring) ([]byte, Key, error) {
	k, ok := kr.ActiveFor(EnvLive)
	if !ok {
		return nil, Key{}, apperr.E("barcode.SignDetached", apperr.Unavailable, CodeNoInspectionSigningKey, "no active inspection signing key")
	}
	sig, err := k.sign(append([]byte(context), body...))
	return sig, k, err
}

// DetachedJSON is {"<name>": body, "signature": {...}}: the signature sits
// next to the bytes it covers, which stay verbatim.
func DetachedJSON(name string, body, sig []byte, kid string) ([]byte, error) {
	s, err := json.Marshal(FeedSignature{KeyID: kid, Alg: "Ed25519", Sig: base64.RawURLEncoding.EncodeToString(sig)})
	if err != nil {
		return nil, err
	}
	return []byte(`{"` + name + `":` + string(body) + `,"signature":` + string(s) + `}`), nil
}

// VerifyDetached checks s over context + body with a live key of kr; the
// error says why not (for the caller's message).
func VerifyDetached(context string, body []byte, s FeedSignature, kr *Keyring) error {
	id, err := strconv.ParseUint(s.KeyID, 10, 16)
	if err != nil || s.Alg != "Ed25519" {
		return errors.New("no Ed25519 signature with a key id")
	}
	k, ok := kr.Lookup(uint16(id))
	if !ok || k.Environment() != EnvLive {
		return errors.New("signed with unknown or non-live key " + s.KeyID)
	}
	sig, err := base64.RawURLEncoding.DecodeString(s.Sig)
	if err != nil || !ed25519.Verify(k.Public, append([]byte(context), body...), sig) {
		return errors.New("the signature does not verify (altered or re-formatted)")
	}
	return nil
}

// Revocations is a verified feed, indexed by ticket id and revoked key id.
type Revocations struct {
	Feed     Feed
	ByTicket map[string]FeedEntry
	ByKey    map[uint16]FeedEntry
}

// VerifyFeed checks a saved or downloaded revocations.json against the
// published keys (a live key; the signature covers the "feed" bytes
// verbatim) and indexes it.
func VerifyFeed(data []byte, kr *Keyring) (*Revocations, error) {
	const op = "barcode.VerifyFeed"
	bad := func(msg string) error {
		return apperr.E(op, apperr.Invalid, CodeInvalidRevocationFeed, "revocation feed: "+msg)
	}
	var env struct {
		Feed      json.RawMessage `json:"feed"`
		Signature FeedSignature   `json:"signature"`
	}
	if err := json.Unmarshal(data, &env); err != nil || len(env.Feed) == 0 {
		return nil, bad("not a revocations.json document")
	}
	if err := VerifyDetached(RevocationContext, env.Feed, env.Signature, kr); err != nil {
		return nil, bad(err.Error())
	}
	r := &Revocations{ByTicket: map[string]FeedEntry{}, ByKey: map[uint16]FeedEntry{}}
	if err := json.Unmarshal(env.Feed, &r.Feed); err != nil || r.Feed.Version != 1 {
		return nil, bad("unsupported feed version")
	}
	for _, e := range r.Feed.Revocations {
		if e.Kid != "" {
			id, err := strconv.ParseUint(e.Kid, 10, 16)
			if err != nil {
				return nil, bad("entry " + strconv.FormatInt(e.Seq, 10) + " names no key id")
			}
			r.ByKey[uint16(id)] = e
			continue
		}
		r.ByTicket[e.TicketID] = e
	}
	return r, nil
}

// Check marks rep revoked when its ticket, or the key that signed it, is in
// the feed. A revoked key is reported even when the keys at hand no longer
// know it (the payload names it), so the inspector learns why.
func (r *Revocations) Check(rep *Report) {
	if r == nil {
		return
	}
	if e, ok := r.ByKey[rep.KeyID]; ok && rep.KeyID != 0 {
		rep.Revoked = &e
		return
	}
	if !rep.Genuine {
		return
	}
	if e, ok := r.ByTicket[rep.Claims.TicketID]; ok {
		rep.Revoked = &e
	}
}
