package uic

import (
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/testtool"
)

func TestInspect(t *testing.T) {
	iss := devIssuer(t, 1)
	live := &Issuer{RICS: 1080, KeyID: 7, Version: 2, Key: devIssuer(t, 2).Key, Name: "Operator"}
	var trust Trust
	trust.TrustIssuer(iss)
	trust.TrustIssuer(live)
	c := sampleClaims()
	mid := time.Date(2026, 12, 15, 12, 0, 0, 0, time.UTC)
	liveB, err := Issue(c, Product{Number: 9999, Area: "Deutschland"}, live, issued)
	if err != nil {
		t.Fatal(err)
	}
	rep := Inspect(liveB, &trust, mid)
	if !rep.Genuine || rep.Test || rep.State != barcode.StateValid || !rep.Acceptable(false) {
		t.Fatalf("live ticket: %+v", rep)
	}
	out := rep.String()
	testtool.Contains(t, out, "GENUINE: UIC 918.3 container 02 with U_FLEX (FCB 1.3), company 1080, key 00007",
		"VALID NOW", "Passenger:   Erika Mustermann", "Born:        1964-08-12", "Product:     Deutschlandticket (9999)",
		"Area:        Deutschland", "Ticket:      "+c.TicketID,
	)
	for at, state := range map[time.Time]string{
		c.ValidFrom.Add(-time.Minute): barcode.StateNotYet, c.ValidFrom: barcode.StateValid,
		c.ValidUntil: barcode.StateValid, c.ValidUntil.Add(time.Second): barcode.StateExpired,
	} {
		if got := Inspect(liveB, &trust, at).State; got != state {
			t.Errorf("at %s: %s, want %s", at, got, state)
		}
	}
	devB, _ := Issue(c, Product{}, iss, issued)
	rep = Inspect(devB, &trust, mid)
	if !rep.Genuine || !rep.Test || rep.Acceptable(false) || !rep.Acceptable(true) ||
		!strings.Contains(rep.String(), "DEVELOPMENT key") || !strings.Contains(rep.String(), "TEST TICKET") {
		t.Errorf("development ticket: %+v\n%s", rep, rep.String())
	}
	// The development key signing a barcode without the specimen flag
	// (someone else's encoder) is refused.
	f, head, _ := toFCB(c, Product{}, iss, issued)
	f.Specimen, f.InfoText = false, ""
	flex, _ := f.Marshal()
	forged, err := Build(1, DevRICS, DevKeyID, iss.Key, []Record{{"U_HEAD", 1, head}, {"U_FLEX", FCBVersion, flex}})
	if err != nil {
		t.Fatal(err)
	}
	if rep := Inspect(forged, &trust, mid); rep.Genuine || !strings.Contains(rep.Reason, "specimen") {
		t.Errorf("development key on a live ticket: %+v", rep)
	}
	// Attacker without a key: an unknown signer, a re-signed container under
	// a trusted id, an altered record.
	other, _ := GenerateDevIssuer(1, nil)
	other.RICS, other.KeyID, other.Development = 1080, 8, false
	unknown, _ := Issue(c, Product{}, other, issued)
	if rep := Inspect(unknown, &trust, mid); rep.Genuine || !strings.Contains(rep.Reason, "unknown key (company 1080, key 00008)") {
		t.Errorf("unknown key: %+v", rep)
	}
	other.KeyID = 7 // claims the operator's key id, v1 container
	resigned, _ := Issue(c, Product{}, other, issued)
	if rep := Inspect(resigned, &trust, mid); rep.Genuine {
		t.Errorf("re-signed under a trusted id: %+v", rep)
	}
	if rep := Inspect(liveB[:len(liveB)-1], &trust, mid); rep.Genuine {
		t.Error("truncated container genuine")
	}
	if rep := Inspect(liveB, nil, mid); rep.Genuine {
		t.Error("genuine without trust")
	}
	// barcode.ParseInput hands containers (raw or in an image) through.
	img, _ := barcode.PNG(liveB, 3, 2)
	for _, in := range [][]byte{liveB, img} {
		got, err := barcode.ParseInput(in)
		if err != nil || string(got) != string(liveB) {
			t.Errorf("ParseInput: %v", err)
		}
	}
}

// A genuine UIC ticket in the revocation feed is rejected with its reason,
// exactly as a farebox payload is (the feed lists ticket ids).
func TestInspectRevoked(t *testing.T) {
	live := &Issuer{RICS: 1080, KeyID: 7, Version: 1, Key: devIssuer(t, 1).Key}
	var trust Trust
	trust.TrustIssuer(live)
	c := sampleClaims()
	b, err := Issue(c, Product{}, live, issued)
	if err != nil {
		t.Fatal(err)
	}
	feed := &barcode.Revocations{ByTicket: map[string]barcode.FeedEntry{
		c.TicketID: {Seq: 3, TicketID: c.TicketID, Kind: "revoked", Reason: "Fahrgeld erstattet", RevokedAt: "2026-12-02T10:00:00Z"}}}
	rep := Inspect(b, &trust, time.Date(2026, 12, 15, 12, 0, 0, 0, time.UTC))
	if !rep.Acceptable(false) {
		t.Fatalf("before the feed: %+v", rep)
	}
	feed.Check(&rep)
	if rep.Acceptable(true) || rep.Revoked == nil || !strings.HasPrefix(rep.String(), "REVOKED: Fahrgeld erstattet (revoked at 2026-12-02T10:00:00Z, revocation feed entry 3)") {
		t.Errorf("revoked: %+v\n%s", rep, rep.String())
	}
}
