package uic

import (
	"bytes"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/clock"
)

// Development issuers are expensive to make (DSA-2048 domain parameters
// take seconds): one per container version for the whole test binary.
var (
	issuerOnce [3]sync.Once
	issuers    [3]*Issuer
)

func devIssuer(t testing.TB, version int) *Issuer {
	t.Helper()
	issuerOnce[version].Do(func() {
		iss, err := GenerateDevIssuer(version, nil)
		if err != nil {
			t.Fatal(err)
		}
		issuers[version] = iss
	})
	if issuers[version] == nil {
		t.Fatal("no development issuer")
	}
	return issuers[version]
}

var issued = time.Date(2026, 11, 24, 10, 7, 0, 0, time.UTC)

func sampleClaims() barcode.Claims {
	return barcode.Claims{
		TicketID:    "farebox-ticket-0b7a5d1c-3f2e-4a6b-9c8d-7e6f5a4b3c2d",
		ProductID:   "farebox-product-11111111-2222-4333-8444-555555555555",
		ProductName: "Deutschlandticket",
		// December in Berlin: 2026-12-01 00:00 CET .. 2026-12-31 23:59 CET
		ValidFrom:   time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC),
		ValidUntil:  time.Date(2026, 12, 31, 22, 59, 0, 0, time.UTC),
		FirstName:   "Erika",
		LastName:    "Mustermann",
		BirthDate:   "1964-08-12",
		Environment: barcode.EnvLive,
	}
}

func TestFCBRoundTripAndKnownPrefix(t *testing.T) {
	f := FCB{
		SecurityProviderNum: 1080, IssuerNum: 1080, IssuingYear: 2026, IssuingDay: 328, IssuingTime: 607,
		IssuerName: "DB", Activated: true, FirstName: "Zoë", LastName: "Åström", YearOfBirth: 1964, DayOfBirth: 225,
		ReferenceIA5: "T-1", ProductOwnerNum: 1080, ProductIDNum: 9999, ValidRegionDesc: "Deutschland",
		ValidFromDay: 7, ValidFromTime: 0, ValidFromOffset: -4, ValidUntilDay: 30, ValidUntilTime: 1439, ValidUntilOffset: -4,
		TariffDesc: "Deutschlandticket", InfoText: "x",
	}
	b, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// Worked by hand: ext 0, presence 1100 (traveller, documents);
	// IssuingData ext 0, presence 10101100000000 (securityProviderNum,
	// issuerNum, issuingTime, issuerName); then 1080-1 in 15 bits
	// (000010000110111) and issuerNum's first bits:
	// 0110 0010 1011 0000 0000 0000 1000 0110 111|0 0001 = 62 b0 00 86 e1.
	if !bytes.HasPrefix(b, []byte{0x62, 0xb0, 0x00, 0x86, 0xe1}) {
		t.Errorf("prefix % x, want 62 b0 00 86 e1", b[:5])
	}
	got, err := UnmarshalFCB(b)
	if err != nil {
		t.Fatal(err)
	}
	if got != f {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, f)
	}
	// Extremes: every range at its bounds, no traveller, product id as text.
	g := FCB{SecurityProviderNum: 32000, IssuerNum: 1, IssuingYear: 2269, IssuingDay: 366, IssuingTime: 1440,
		Specimen: true, ReferenceIA5: strings.Repeat("9", 200), ProductIDNum: -1, ProductIDIA5: strings.Repeat("p", 130),
		ValidFromDay: -1, ValidFromTime: 1440, ValidFromOffset: 60, ValidUntilDay: 370, ValidUntilTime: 0, ValidUntilOffset: -60}
	b, err = g.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := UnmarshalFCB(b); err != nil || got != g {
		t.Errorf("extremes: %v\n got %+v\nwant %+v", err, got, g)
	}
	for name, bad := range map[string]FCB{
		"year":   {IssuingYear: 2015, IssuingDay: 1, ProductIDNum: -1},
		"offset": {IssuingYear: 2020, IssuingDay: 1, ProductIDNum: -1, ValidFromOffset: 61},
		"ia5":    {IssuingYear: 2020, IssuingDay: 1, ProductIDNum: -1, ReferenceIA5: "ä"},
	} {
		if _, err := bad.Marshal(); err == nil {
			t.Errorf("%s: out-of-range FCB encoded", name)
		}
	}
}

// Every truncation and every single-bit change of an FCB is either refused
// or decodes to something else; it never panics.
func TestFCBMutations(t *testing.T) {
	c := sampleClaims()
	f, _, err := toFCB(c, Product{Number: 9999, Area: "Deutschland"}, devIssuer(t, 1), issued)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := f.Marshal()
	for n := 0; n < len(b); n++ {
		if _, err := UnmarshalFCB(b[:n]); err == nil {
			t.Errorf("truncated to %d of %d bytes: accepted", n, len(b))
		}
	}
	if _, err := UnmarshalFCB(append(append([]byte{}, b...), 0)); err == nil {
		t.Error("trailing byte accepted")
	}
	for i := 0; i < 8*len(b); i++ {
		m := append([]byte{}, b...)
		m[i/8] ^= 0x80 >> (i % 8)
		if g, err := UnmarshalFCB(m); err == nil && g == f {
			t.Errorf("bit %d flipped: decodes to the same ticket", i)
		}
	}
}

func TestIssueReadVerify(t *testing.T) {
	for _, version := range []int{1, 2} {
		iss := devIssuer(t, version)
		c := sampleClaims()
		b, err := Issue(c, Product{Number: 9999, Area: "Deutschland"}, iss, issued)
		if err != nil {
			t.Fatal(err)
		}
		tk, ct, err := Read(b)
		if err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		if err := ct.VerifySignature(&iss.Key.PublicKey); err != nil {
			t.Errorf("v%d: own signature: %v", version, err)
		}
		want := c
		want.ProductID = "9999"
		want.Environment = barcode.EnvTest // development issuer: a specimen
		if !reflect.DeepEqual(tk.Claims, want) || tk.Area != "Deutschland" || tk.ProductNumber != 9999 || tk.RICS != DevRICS ||
			tk.KeyID != DevKeyID || tk.Container != version || !tk.IssuedAt.Equal(issued) {
			t.Errorf("v%d: read back %+v", version, tk)
		}
		if !bytes.HasPrefix(b, []byte{'#', 'U', 'T', '0', byte('0' + version)}) {
			t.Errorf("v%d: header % x", version, b[:5])
		}
		// Tampering anywhere after the signature breaks it; another key does not verify.
		for i := 18 + SigFieldLen(version); i < len(b); i++ {
			m := append([]byte{}, b...)
			m[i] ^= 1
			ct, err := Parse(m)
			if err == nil && ct.VerifySignature(&iss.Key.PublicKey) == nil {
				t.Fatalf("v%d: byte %d altered, still verifies", version, i)
			}
		}
		other := devIssuer(t, 3-version)
		if _, ct, _ := Read(b); ct.VerifySignature(&other.Key.PublicKey) == nil {
			t.Errorf("v%d: verifies with another key", version)
		}
	}
}

// TestIssuedLateInTheValidity: a monthly ticket bought on the 28th is valid
// from the 1st; its barcode says it was issued on the 28th at the real
// minute (U_HEAD and FCB), and since FCB 1.3 cannot count the validity more
// than one day back from the issuing day, the validity read back starts at
// 00:00 Berlin the day before the issue (nothing can be inspected earlier)
// and ends as the ticket does. Issue 28: the issuing time was backdated.
func TestIssuedLateInTheValidity(t *testing.T) {
	c := sampleClaims() // December
	for _, at := range []time.Time{
		time.Date(2026, 12, 28, 14, 37, 0, 0, time.UTC), // 27th 00:00 CET
		time.Date(2026, 12, 2, 23, 30, 0, 0, time.UTC),  // 3 December 00:30 CET, UTC day the 2nd: from the 1st 00:00
		time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC),    // from 2 December 00:00
	} {
		b, err := Issue(c, Product{Number: 9999}, devIssuer(t, 1), at)
		if err != nil {
			t.Fatalf("issued %v: %v", at, err)
		}
		tk, ct, err := Read(b)
		if err != nil {
			t.Fatal(err)
		}
		head, _ := ct.Record("U_HEAD")
		wantFrom := time.Date(at.Year(), at.Month(), at.Day()-1, 0, 0, 0, 0, clock.Berlin)
		if wantFrom.Before(c.ValidFrom) {
			wantFrom = c.ValidFrom
		}
		if !tk.IssuedAt.Equal(at) || string(head.Data[24:36]) != at.Format("020120061504") ||
			!tk.ValidFrom.Equal(wantFrom) || !tk.ValidUntil.Equal(c.ValidUntil) {
			t.Errorf("issued %v: read issued %v (U_HEAD %s), valid %v – %v; want from %v until %v", at, tk.IssuedAt, head.Data[24:36],
				tk.ValidFrom, tk.ValidUntil, wantFrom, c.ValidUntil)
		}
	}
}

func TestIssueRefusesWhatTheFormatCannotCarry(t *testing.T) {
	iss := devIssuer(t, 1)
	for name, mut := range map[string]func(*barcode.Claims){
		"a year of validity":  func(c *barcode.Claims) { c.ValidUntil = c.ValidFrom.AddDate(1, 1, 0) },
		"valid from far away": func(c *barcode.Claims) { c.ValidFrom = issued.AddDate(2, 0, 0); c.ValidUntil = c.ValidFrom },
		"birth before 1901":   func(c *barcode.Claims) { c.BirthDate = "1900-12-31" },
		"until before from":   func(c *barcode.Claims) { c.ValidUntil = c.ValidFrom.Add(-time.Minute) },
		"no ticket id":        func(c *barcode.Claims) { c.TicketID = "" },
		"non-ascii ticket id": func(c *barcode.Claims) { c.TicketID = "ticket-ä" },
	} {
		c := sampleClaims()
		mut(&c)
		if _, err := Issue(c, Product{}, iss, issued); err == nil {
			t.Errorf("%s: issued", name)
		}
	}
}

func TestKeyPEMRoundTrip(t *testing.T) {
	iss := devIssuer(t, 1)
	p, err := MarshalKeyPEM(iss.Key)
	if err != nil {
		t.Fatal(err)
	}
	k, v, err := ParseKeyPEM(p)
	if err != nil || v != 1 || k.X.Cmp(iss.Key.X) != 0 || k.Y.Cmp(iss.Key.Y) != 0 {
		t.Fatalf("round trip: v%d %v", v, err)
	}
	k.Y.Add(k.Y, k.Y) // inconsistent public half
	p2, _ := MarshalKeyPEM(k)
	if _, _, err := ParseKeyPEM(p2); err == nil {
		t.Error("inconsistent key accepted")
	}
	if _, _, err := ParseKeyPEM([]byte("-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n")); err == nil {
		t.Error("other PEM type accepted")
	}
}

func TestParseRefusesMalformedContainers(t *testing.T) {
	b, err := Issue(sampleClaims(), Product{}, devIssuer(t, 1), issued)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b); n++ {
		if _, _, err := Read(b[:n]); err == nil {
			t.Errorf("truncated to %d bytes: read", n)
		}
	}
	bad := append([]byte{}, b...)
	copy(bad[3:5], "03")
	if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("version 03: %v", err)
	}
	if _, err := Parse([]byte("FB\x01")); err == nil {
		t.Error("farebox payload parsed as a container")
	}
	// A zip bomb is cut at 64 KiB.
	big := make([]byte, 1<<20)
	rec := []Record{{Tag: "U_TEST", Version: 1, Data: big[:9000]}}
	for i := 0; i < 10; i++ {
		rec = append(rec, rec[0])
	}
	c, err := Build(1, 1, 1, devIssuer(t, 1).Key, rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(c); err == nil {
		t.Error("99 KB of records accepted")
	}
}

// The same ticket always gets the same barcode; another ticket another
// signature; crypto/dsa verifies what signDeterministic makes.
func TestSignaturesAreDeterministic(t *testing.T) {
	for _, v := range []int{1, 2} {
		iss := devIssuer(t, v)
		a, err := Issue(sampleClaims(), Product{}, iss, issued)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Issue(sampleClaims(), Product{}, iss, issued)
		c2 := sampleClaims()
		c2.FirstName = "Erik"
		c, _ := Issue(c2, Product{}, iss, issued)
		if !bytes.Equal(a, b) || bytes.Equal(a[14:14+SigFieldLen(v)], c[14:14+SigFieldLen(v)]) {
			t.Errorf("v%d: not deterministic or signature repeated across tickets", v)
		}
		ct, _ := Parse(c)
		if err := ct.VerifySignature(&iss.Key.PublicKey); err != nil {
			t.Errorf("v%d: %v", v, err)
		}
	}
}
