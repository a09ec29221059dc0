package vdv

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/testtool"
)

func sampleClaims() barcode.Claims {
	return barcode.Claims{
		TicketID:    "farebox-ticket-0b7a5d1c-3f2e-4a6b-9c8d-7e6f5a4b3c2d",
		ProductID:   "farebox-product-11111111-2222-4333-8444-555555555555",
		ProductName: "Deutschlandticket",
		// December in Berlin: 2026-12-01 00:00:00 .. 2026-12-31 23:59:59 CET
		ValidFrom:   time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC),
		ValidUntil:  time.Date(2026, 12, 31, 22, 59, 59, 0, time.UTC),
		FirstName:   "Erika",
		LastName:    "Mustermann",
		BirthDate:   "1964-08-12",
		Environment: barcode.EnvLive,
	}
}

var (
	issued   = time.Date(2026, 11, 25, 8, 30, 14, 0, time.UTC)
	dticket  = Product{Number: 9999, Area: "Deutschland", PriceCents: 5800, VATBP: 700}
	liveOnce sync.Once
	liveIss  *Issuer
	liveTr   Trust
	liveErr  error
)

// livePKI is a second generated chain trusted as if it were the VDV's
// (not marked development): an operator's configured issuer.
func livePKI(t testing.TB) (*Issuer, *Trust) {
	liveOnce.Do(func() {
		var p *DevPKI
		p, liveErr = generateChain(rand.Reader, now, MakeRef("DE", "TSR", 0, 1, 1, 0x26), MakeRef("DE", "TSC", 1, 1, 1, 0x26), MakeRef("DE", "TSO", 1, 1, 1, 0x26), false)
		if liveErr != nil {
			return
		}
		if _, liveErr = liveTr.AddRoot(p.Root, false); liveErr != nil {
			return
		}
		if _, liveErr = liveTr.AddCA(p.CA, now); liveErr != nil {
			return
		}
		liveIss, liveErr = NewIssuer(6310, 6262, p.Issuer.Key, p.Issuer.Cert, &liveTr, now)
	})
	if liveErr != nil {
		t.Fatal(liveErr)
	}
	return liveIss, &liveTr
}

func TestTicketRoundTrip(t *testing.T) {
	iss, trust := livePKI(t)
	c := sampleClaims()
	b, err := Issue(c, dticket, iss, issued)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Issue(c, dticket, iss, issued)
	if !bytes.Equal(b, again) {
		t.Fatal("issuing twice gave two barcodes")
	}
	if b[0] != 0x9E || b[1] != 0x81 || b[2] != 0x80 || b[131] != 0x9A {
		t.Fatalf("layout % X", b[:4])
	}
	t.Logf("barcode %d bytes", len(b))
	if len(b) > 450 {
		t.Fatalf("barcode of %d bytes", len(b))
	}
	v, err := Verify(b, trust, now)
	if err != nil {
		t.Fatal(err)
	}
	want := c
	want.ValidUntil = c.ValidUntil.Add(-time.Second) // even seconds, rounded down
	want.ProductID, want.ProductName = "9999", "Deutschlandticket"
	if !reflect.DeepEqual(v.Claims, want) {
		t.Fatalf("claims\n got %+v\nwant %+v", v.Claims, want)
	}
	if v.Number != TicketNumber(c.TicketID) || v.Org != 6310 || v.ProductOrg != 6262 || v.ProductNumber != 9999 ||
		v.Area != "Deutschland" || v.PriceCents != 5800 || v.VATBP != 700 || !v.IssuedAt.Equal(issued) ||
		v.SAMSeq1 != v.Number || v.SAMSeq2 != v.Number || v.SAMID != 6310 || v.Version != TrailerVersion || v.Development {
		t.Fatalf("%+v", v.Ticket)
	}
}

func TestTicketFields(t *testing.T) {
	iss, trust := livePKI(t)
	for name, c := range map[string]func(*barcode.Claims){
		"umlauts": func(c *barcode.Claims) { c.FirstName, c.LastName = "Jürgen", "Weiß-Öztürk" },
		"no name": func(c *barcode.Claims) { c.FirstName, c.LastName, c.BirthDate = "", "", "" },
		"test":    func(c *barcode.Claims) { c.Environment = barcode.EnvTest },
		"summer": func(c *barcode.Claims) {
			c.ValidFrom, c.ValidUntil = time.Date(2026, 5, 31, 22, 0, 0, 0, time.UTC), time.Date(2026, 6, 30, 21, 59, 58, 0, time.UTC)
		},
		"long id":   func(c *barcode.Claims) { c.TicketID = strings.Repeat("x", 127) },
		"born 1901": func(c *barcode.Claims) { c.BirthDate = "1901-01-01" },
	} {
		cl := sampleClaims()
		c(&cl)
		b, err := Issue(cl, dticket, iss, issued)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		v, err := Verify(b, trust, now)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v.FirstName != cl.FirstName || v.LastName != cl.LastName || v.BirthDate != cl.BirthDate ||
			v.Environment != cl.Environment || v.TicketID != cl.TicketID ||
			!v.ValidFrom.Equal(cl.ValidFrom) || cl.ValidUntil.Sub(v.ValidUntil) > time.Second || v.ValidUntil.After(cl.ValidUntil) {
			t.Errorf("%s: %+v", name, v.Claims)
		}
	}
	// Long names are cut (on a character boundary) to 30 bytes each.
	cl := sampleClaims()
	cl.FirstName, cl.LastName = strings.Repeat("ä", 20), strings.Repeat("Z", 80)
	b, err := Issue(cl, dticket, iss, issued)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := Verify(b, trust, now)
	if v.FirstName != strings.Repeat("ä", 15) || v.LastName != strings.Repeat("Z", 30) {
		t.Errorf("cut names %q %q", v.FirstName, v.LastName)
	}
	for name, c := range map[string]func(*barcode.Claims, *Product){
		"no product number": func(_ *barcode.Claims, p *Product) { p.Number = 0 },
		"product 65536":     func(_ *barcode.Claims, p *Product) { p.Number = 65536 },
		"year 2118":         func(c *barcode.Claims, _ *Product) { c.ValidUntil = time.Date(2118, 1, 2, 0, 0, 0, 0, time.UTC) },
		"year 1989":         func(c *barcode.Claims, _ *Product) { c.ValidFrom = time.Date(1989, 1, 2, 0, 0, 0, 0, time.UTC) },
		"bad birth":         func(c *barcode.Claims, _ *Product) { c.BirthDate = "12.08.1964" },
		"id 128 bytes":      func(c *barcode.Claims, _ *Product) { c.TicketID = strings.Repeat("x", 128) },
		"until < from":      func(c *barcode.Claims, _ *Product) { c.ValidUntil = c.ValidFrom.Add(-time.Second) },
		"price":             func(_ *barcode.Claims, p *Product) { p.PriceCents = 1 << 24 },
		"environment":       func(c *barcode.Claims, _ *Product) { c.Environment = "staging" },
	} {
		cl, p := sampleClaims(), dticket
		c(&cl, &p)
		if _, err := Issue(cl, p, iss, issued); err == nil {
			t.Errorf("%s: issued", name)
		}
	}
}

func TestDateTimeEncoding(t *testing.T) {
	for _, at := range []time.Time{
		time.Date(1990, 1, 1, 0, 0, 0, 0, berlin), time.Date(2117, 12, 31, 23, 59, 58, 0, berlin),
		time.Date(2026, 3, 29, 3, 0, 0, 0, berlin), time.Date(2026, 10, 25, 1, 59, 58, 0, time.UTC),
	} {
		b, err := appendDateTime(nil, at)
		if err != nil {
			t.Fatal(at, err)
		}
		back, err := dateTime(b)
		if err != nil || !back.Equal(at) {
			t.Errorf("%s -> % X -> %s %v", at, b, back, err)
		}
	}
	// 2026-11-25 09:30:14 Berlin: (36<<25)|(11<<21)|(25<<16)|(9<<11)|(30<<5)|7
	b, _ := appendDateTime(nil, time.Date(2026, 11, 25, 9, 30, 14, 0, berlin))
	if !bytes.Equal(b, []byte{0x49, 0x79, 0x4B, 0xC7}) {
		t.Errorf("% X", b)
	}
	field := func(y, mo, d, h, mi, s2 uint32) []byte {
		return binary.BigEndian.AppendUint32(nil, (y-1990)<<25|mo<<21|d<<16|h<<11|mi<<5|s2)
	}
	for _, bad := range [][]byte{field(2026, 13, 1, 0, 0, 0), field(2026, 0, 1, 0, 0, 0), field(2026, 2, 30, 0, 0, 0),
		field(2026, 1, 0, 0, 0, 0), field(2026, 1, 1, 24, 0, 0), field(2026, 1, 1, 0, 60, 0), field(2026, 1, 1, 0, 0, 30)} {
		if _, err := dateTime(bad); err == nil {
			t.Errorf("% X accepted", bad)
		}
	}
}

func TestVerifyRefuses(t *testing.T) {
	iss, trust := livePKI(t)
	dev := sharedDev(t)
	c := sampleClaims()
	b, err := Issue(c, dticket, iss, issued)
	if err != nil {
		t.Fatal(err)
	}
	// Untrusted: nothing configured, or only the development root.
	var devTrust Trust
	devTrust.AddRoot(dev.Root, true)
	devTrust.AddCA(dev.CA, now)
	for _, tr := range []*Trust{nil, {}, &devTrust} {
		if _, err := Verify(b, tr, now); !errors.Is(err, ErrUntrusted) {
			t.Errorf("untrusted chain: %v", err)
		}
	}
	// Certificates expired by now.
	if _, err := Verify(b, trust, now.AddDate(11, 0, 0)); !errors.Is(err, ErrUntrusted) {
		t.Errorf("expired certificate: %v", err)
	}
	// Every byte altered: never verifies as the original ticket.
	for i := 0; i < len(b); i++ {
		x := bytes.Clone(b)
		x[i] ^= 0x08
		v, err := Verify(x, trust, now)
		if err == nil && !reflect.DeepEqual(v.Claims, mustVerify(t, b, trust).Claims) {
			t.Fatalf("byte %d altered verifies with other claims", i)
		}
		if err == nil {
			t.Fatalf("byte %d altered still verifies", i)
		}
	}
	// Truncated and extended.
	if _, err := Verify(b[:len(b)-1], trust, now); err == nil {
		t.Error("truncated barcode verifies")
	}
	if _, err := Verify(append(bytes.Clone(b), 0), trust, now); err == nil {
		t.Error("extended barcode verifies")
	}
	// Another organisation's certificate in front of this signature.
	other, err := Issue(c, dticket, dev.Issuer, issued)
	if err != nil {
		t.Fatal(err)
	}
	so, _ := Parse(other)
	s, _ := Parse(b)
	spliced := AppendTLV(AppendTLV(nil, TagTicketSignature, s.Signature), TagTicketRemainder, s.Remainder)
	spliced = AppendTLV(append(spliced, so.Cert...), TagCAReference, so.CAR[:])
	if _, err := Verify(spliced, &devTrust, now); !errors.Is(err, ErrSignature) {
		t.Errorf("signature under another organisation's certificate: %v", err)
	}
}

func mustVerify(t *testing.T, b []byte, tr *Trust) Verified {
	v, err := Verify(b, tr, now)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestInspect(t *testing.T) {
	iss, trust := livePKI(t)
	dev := sharedDev(t)
	trust2 := *trust
	// the same trust plus the development chain
	trust2.roots, trust2.cas = map[Ref]trustedCert{}, map[Ref]trustedCert{}
	for k, v := range trust.roots {
		trust2.roots[k] = v
	}
	for k, v := range trust.cas {
		trust2.cas[k] = v
	}
	trust2.AddRoot(dev.Root, true)
	trust2.AddCA(dev.CA, now)
	c := sampleClaims()
	mid := time.Date(2026, 12, 15, 12, 0, 0, 0, time.UTC)
	b, _ := Issue(c, dticket, iss, issued)
	rep := Inspect(b, &trust2, mid)
	if !rep.Genuine || rep.Test || rep.State != barcode.StateValid || !rep.Acceptable(false) {
		t.Fatalf("%+v", rep)
	}
	out := rep.String()
	testtool.Contains(t, out, "VDV-KA static barcode 1.3.01, organisation 6310, certificate DE TSO", "by CA DE TSC",
		"VALID NOW", "Passenger:   Erika Mustermann", "Born:        1964-08-12", "Product:     Deutschlandticket (9999)",
		"Area:        Deutschland", "Ticket:      "+c.TicketID, "product organisation 6262", "Price:       58.00 EUR (VAT 7.00 %)",
	)
	for at, state := range map[time.Time]string{
		c.ValidFrom.Add(-time.Second): barcode.StateNotYet, c.ValidFrom: barcode.StateValid,
		c.ValidUntil.Add(-time.Second): barcode.StateValid, c.ValidUntil: barcode.StateExpired,
	} {
		if got := Inspect(b, &trust2, at).State; got != state {
			t.Errorf("at %s: %s, want %s", at, got, state)
		}
	}
	db, _ := Issue(c, dticket, dev.Issuer, issued)
	rep = Inspect(db, &trust2, mid)
	if !rep.Genuine || !rep.Test || rep.Acceptable(false) || !rep.Acceptable(true) || !strings.Contains(rep.String(), "DEVELOPMENT PKI") {
		t.Errorf("development ticket: %+v\n%s", rep, rep.String())
	}
	// The development key on a ticket without the test flag (another encoder) is refused.
	data, _ := EncodeTicket(c, dticket, &Issuer{Org: DevOrg, ProductOrg: DevOrg}, issued)
	sig, rem, _ := Sign9796(dev.Issuer.Key, Hash, data)
	forged := AppendTLV(AppendTLV(nil, TagTicketSignature, sig), TagTicketRemainder, rem)
	forged = AppendTLV(append(forged, dev.Issuer.Cert...), TagCAReference, DevCARef[:])
	if rep := Inspect(forged, &trust2, mid); rep.Genuine || !strings.Contains(rep.Reason, "not marked as test") {
		t.Errorf("development PKI on a live ticket: %+v", rep)
	}
	if rep := Inspect(b, &Trust{}, mid); rep.Genuine || !strings.Contains(rep.Reason, "not trusted") {
		t.Errorf("untrusted: %+v", rep)
	}
	x := bytes.Clone(b)
	x[40] ^= 1
	if rep := Inspect(x, &trust2, mid); rep.Genuine || !strings.Contains(rep.Reason, "forged or altered") {
		t.Errorf("altered: %+v", rep)
	}
	if !IsBarcode(b) || IsBarcode(b[1:]) || IsBarcode([]byte("#UT01")) {
		t.Error("IsBarcode")
	}
}
