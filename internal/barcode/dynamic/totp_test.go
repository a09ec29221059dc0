package dynamic_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/dynamic"
)

// TestTOTPVectors: RFC 6238 Appendix B, SHA-1 (the key is the 20 ASCII
// bytes "12345678901234567890", 30 s steps, 8 digits).
func TestTOTPVectors(t *testing.T) {
	key := []byte("12345678901234567890")
	for at, want := range map[int64]string{59: "94287082", 1111111109: "07081804", 1111111111: "14050471",
		1234567890: "89005924", 2000000000: "69279037", 20000000000: "65353130"} {
		if got := dynamic.TOTP(key, at, 30, 8); got != want {
			t.Errorf("TOTP at %d = %s, RFC 6238 says %s", at, got, want)
		}
	}
	if got := dynamic.TOTP(key, 59, 30, 6); got != "287082" { // RFC 4226's truncation to 6 digits
		t.Errorf("6 digits: %s", got)
	}
}

var rotatingSecret = bytes.Repeat([]byte{0x5a}, 32)

func (f fixture) rotating(at time.Time) []byte {
	return []byte(dynamic.RotatingValue(f.static, dynamic.TicketKey(rotatingSecret, f.claims.TicketID), at, 30))
}

// TestRotatingLiveWindow: the code Google Wallet shows now is accepted;
// ParseInput passes its text through; the key is per ticket.
func TestRotatingLiveWindow(t *testing.T) {
	f := newFixture(t, ticketA, nil)
	at := epoch.Add(7 * time.Second)
	code := f.rotating(at)
	in, err := barcode.ParseInput(append(append([]byte(" "), code...), '\n'))
	if err != nil || !bytes.Equal(in, code) {
		t.Fatalf("ParseInput: %q %v", in, err)
	}
	rep := dynamic.InspectRotating(in, f.kr, rotatingSecret, at, dynamic.Options{})
	if !rep.Acceptable(false) || !rep.Window.Start.Equal(epoch) {
		t.Fatalf("live rotating code refused: %s (window %v)", rep, rep.Window)
	}
	if bytes.Equal(dynamic.TicketKey(rotatingSecret, ticketA), dynamic.TicketKey(rotatingSecret, ticketB)) {
		t.Fatal("two tickets share a TOTP key")
	}
	if p := dynamic.ValuePattern(f.static); !strings.HasSuffix(p, ".{totp_timestamp_seconds}.{totp_value_0}") {
		t.Fatalf("pattern %s", p)
	}
}

// TestRotatingCopied: an expired window, a window ahead of the clock, a
// timestamp changed to now (the TOTP no longer matches), a code of another
// ticket's key and a device without the secret are all refused as copied;
// the tolerance edges are those of the device-signed code.
func TestRotatingCopied(t *testing.T) {
	f := newFixture(t, ticketA, nil)
	code := f.rotating(epoch.Add(5 * time.Second))
	check := func(name string, data []byte, secret []byte, now time.Time, o dynamic.Options, want string) {
		t.Helper()
		rep := dynamic.InspectRotating(data, f.kr, secret, now, o)
		if rep.Acceptable(false) || !strings.HasPrefix(rep.Copied, "copied: ") || !strings.Contains(rep.Copied, want) {
			t.Errorf("%s: %q, want copied with %q", name, rep.Copied, want)
		}
	}
	// window 10:00:00–10:00:30, tolerance 30 s: accepted until 10:01:00
	if rep := dynamic.InspectRotating(code, f.kr, rotatingSecret, epoch.Add(59*time.Second), dynamic.Options{}); !rep.Acceptable(false) {
		t.Fatalf("inside the tolerance: %s", rep)
	}
	check("expired", code, rotatingSecret, epoch.Add(60*time.Second), dynamic.Options{}, "ago")
	check("no tolerance", code, rotatingSecret, epoch.Add(30*time.Second), dynamic.Options{Tolerance: -1}, "ago")
	check("ahead", code, rotatingSecret, epoch.Add(-31*time.Second), dynamic.Options{}, "ahead")
	parts := strings.Split(string(code), ".")
	parts[2] = "1796032830" // 10:00:30, the next window, with the old value
	check("replayed", []byte(strings.Join(parts, ".")), rotatingSecret, epoch.Add(31*time.Second), dynamic.Options{}, "not made by this ticket's wallet pass")
	other := newFixture(t, ticketB, nil)
	forged := dynamic.RotatingValue(f.static, dynamic.TicketKey(rotatingSecret, other.claims.TicketID), epoch, 30)
	check("other ticket's key", []byte(forged), rotatingSecret, epoch, dynamic.Options{}, "not made by")
	check("no secret", code, nil, epoch, dynamic.Options{}, "no rotating-barcode secret")
}

// TestRotatingGarbage: unreadable texts say "cannot read", never panic; a
// static payload inside is forged.
func TestRotatingGarbage(t *testing.T) {
	f := newFixture(t, ticketA, nil)
	good := string(f.rotating(epoch))
	parts := strings.Split(good, ".")
	for _, s := range []string{"FR1.", "FR1...", "FR1.a.b.c.d", "FR1.!!.1.12345678", "FR1." + parts[1] + ".x.12345678",
		"FR1." + parts[1] + ".1.1234567", "FR1." + parts[1] + ".12345678901.12345678", "FR1." + strings.Repeat("A", 5000) + ".1.12345678"} {
		rep := dynamic.InspectRotating([]byte(s), f.kr, rotatingSecret, epoch, dynamic.Options{})
		if rep.Genuine || !strings.HasPrefix(rep.Reason, "cannot read") {
			t.Errorf("%.40q: %+v", s, rep.Reason)
		}
	}
	k, _ := barcode.KeyFromSeed(7, bytes.Repeat([]byte{9}, 32))
	kr, _ := barcode.NewKeyring(k)
	c := f.claims
	c.Dynamic, c.WindowSeconds = false, 0
	p, _, err := barcode.SignWith(c, kr, 0)
	if err != nil {
		t.Fatal(err)
	}
	v := dynamic.RotatingValue(p, dynamic.TicketKey(rotatingSecret, ticketA), epoch, 30)
	if rep := dynamic.InspectRotating([]byte(v), kr, rotatingSecret, epoch, dynamic.Options{}); rep.Genuine {
		t.Fatalf("a static payload in a rotating code passed: %s", rep)
	}
}

func FuzzParseRotating(f *testing.F) {
	f.Add([]byte("FR1.AAAA.1.12345678"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = dynamic.ParseRotating(b)
	})
}
