package barcode

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestSignWithKeepsTheTicketsKey: a stamped key signs while the keyring
// holds its private half and it is of the ticket's range; otherwise the
// active key does (a ticket is never left without a signature).
func TestSignWithKeepsTheTicketsKey(t *testing.T) {
	k1, _ := GenerateKey(1, newRand(1))
	k2, _ := GenerateKey(2, newRand(2))
	kt, _ := GenerateKey(TestKeyIDBase+1, newRand(3))
	pub3, _ := GenerateKey(3, newRand(4))
	pub3.Private = nil
	kr, err := NewKeyring(k2, k1, kt, pub3)
	if err != nil {
		t.Fatal(err)
	}
	live, test := sampleClaims(), sampleClaims()
	test.Environment = EnvTest
	for _, c := range []struct {
		claims Claims
		kid    uint16
		want   uint16
	}{
		{live, 1, 1}, {live, 0, 2}, {live, 2, 2}, {live, 3, 2}, {live, 999, 2},
		{live, TestKeyIDBase + 1, 2}, {test, 1, TestKeyIDBase + 1}, {test, 0, TestKeyIDBase + 1},
	} {
		p, signer, err := SignWith(c.claims, kr, c.kid)
		if err != nil || signer != c.want {
			t.Errorf("%s ticket, stamped %d: signed by %d (%v), want %d", c.claims.Environment, c.kid, signer, err, c.want)
			continue
		}
		if got, err := Verify(p, kr); err != nil || got.KeyID != c.want {
			t.Errorf("stamped %d: verify %v %v", c.kid, got.KeyID, err)
		}
	}
}

// TestKeyEntriesInTheFeed: a key entry rejects what the key signed, genuine
// or (with today's keys, where the key is gone) not; other keys' tickets
// pass; a key entry without a usable key id makes the feed invalid.
func TestKeyEntriesInTheFeed(t *testing.T) {
	k1, _ := GenerateKey(1, newRand(1))
	k2, _ := GenerateKey(2, newRand(2))
	old, _ := NewKeyring(k1)
	both, _ := NewKeyring(k2, k1)
	today, _ := NewKeyring(k2)
	now := time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC)
	feed := Feed{Version: 1, GeneratedAt: "2026-11-15T12:00:00Z", LastSeq: 1, Revocations: []FeedEntry{
		{Seq: 1, Kid: "1", Kind: "key", Reason: "Schlüssel kompromittiert", RevokedAt: "2026-11-15T11:00:00Z", ValidUntil: "2026-12-16T11:00:00Z"}}}
	body, sig, key, err := SignFeed(feed, both)
	if err != nil || key.ID != 2 {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(map[string]any{"feed": json.RawMessage(body), "signature": FeedSignature{KeyID: "2", Alg: "Ed25519", Sig: b64(sig)}})
	if strings.Contains(string(body), "ticket_id") {
		t.Errorf("a key entry carries a ticket_id: %s", body)
	}
	r, err := VerifyFeed(doc, both)
	if err != nil || len(r.ByKey) != 1 || len(r.ByTicket) != 0 {
		t.Fatalf("verify: %v", err)
	}
	oldPayload, _, _ := SignWith(sampleClaims(), old, 0)
	newPayload, _, _ := SignWith(sampleClaims(), both, 0)
	for name, c := range map[string]struct {
		payload       []byte
		kr            *Keyring
		revoked, geni bool
	}{
		"old barcode, keys with 1": {oldPayload, both, true, true},
		"old barcode, today":       {oldPayload, today, true, false},
		"new barcode":              {newPayload, both, false, true},
	} {
		rep := Inspect(c.payload, c.kr, now)
		r.Check(&rep)
		if (rep.Revoked != nil) != c.revoked || rep.Genuine != c.geni || (c.revoked && rep.Acceptable(false)) {
			t.Errorf("%s: %+v\n%s", name, rep, rep)
		}
	}
	feed.Revocations[0].Kid = "x"
	body, sig, _, _ = SignFeed(feed, both)
	doc, _ = json.Marshal(map[string]any{"feed": json.RawMessage(body), "signature": FeedSignature{KeyID: "2", Alg: "Ed25519", Sig: b64(sig)}})
	if _, err := VerifyFeed(doc, both); err == nil {
		t.Error("a key entry with kid \"x\" verified")
	}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
