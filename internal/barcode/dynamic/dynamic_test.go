package dynamic_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/dynamic"
	"github.com/farebox/farebox/internal/barcode/dynamic/dynamictest"
)

var epoch = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC) // a window start for 30 s windows

type fixture struct {
	kr     *barcode.Keyring
	device *ecdsa.PrivateKey
	static []byte
	claims barcode.Claims
}

func newDevice(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func point(t testing.TB, k *ecdsa.PrivateKey) []byte {
	pub, err := k.PublicKey.ECDH()
	if err != nil {
		t.Fatal(err)
	}
	return pub.Bytes()
}

func newFixture(t testing.TB, ticketID string, device *ecdsa.PrivateKey) fixture {
	k, _ := barcode.KeyFromSeed(7, bytes.Repeat([]byte{9}, 32))
	kr, err := barcode.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	c := barcode.Claims{TicketID: ticketID, ProductID: "farebox-product-0a1b2c3d-4e5f-4a6b-9c8d-7e6f5a4b3c2d",
		ProductName: "Deutschlandticket", ValidFrom: epoch.Add(-24 * time.Hour), ValidUntil: epoch.Add(24 * time.Hour),
		FirstName: "Max", LastName: "Mustermann", BirthDate: "1990-01-01", Environment: barcode.EnvLive,
		Dynamic: true, WindowSeconds: 30}
	if device != nil {
		c.DeviceKey = point(t, device)
	}
	p, _, err := barcode.SignWith(c, kr, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{kr: kr, device: device, static: p, claims: c}
}

func (f fixture) code(t testing.TB, at time.Time) []byte {
	b, err := dynamictest.Build(f.static, dynamictest.WindowAt(at, 30), f.device)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const ticketA = "farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f"
const ticketB = "farebox-ticket-7c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f"

// TestValidWindow: the live code of the bound phone is accepted, shows the
// window, and the payload round-trips the device key and window length.
func TestValidWindow(t *testing.T) {
	f := newFixture(t, ticketA, newDevice(t))
	at := epoch.Add(12 * time.Second)
	rep := dynamic.Inspect(f.code(t, at), f.kr, at, dynamic.Options{})
	if !rep.Acceptable(false) || rep.Copied != "" {
		t.Fatalf("live code refused: %s", rep)
	}
	if !rep.Window.Start.Equal(epoch) || !rep.Window.End.Equal(epoch.Add(30*time.Second)) {
		t.Errorf("window %v–%v", rep.Window.Start, rep.Window.End)
	}
	if !bytes.Equal(rep.Claims.DeviceKey, point(t, f.device)) || rep.Claims.WindowSeconds != 30 || !rep.Claims.Dynamic {
		t.Errorf("claims %+v", rep.Claims)
	}
	if strings.Contains(rep.String(), "COPIED") {
		t.Errorf("report says copied: %s", rep)
	}
}

// TestToleranceEdges: with 30 s windows and a 10 s tolerance the code of
// window [10:00:00, 10:00:30) passes from 09:59:50 up to 10:00:39.999 and
// no longer at 10:00:40 or before 09:59:50; tolerance -1 means none.
func TestToleranceEdges(t *testing.T) {
	f := newFixture(t, ticketA, newDevice(t))
	code := f.code(t, epoch)
	for _, c := range []struct {
		at   time.Duration
		tol  time.Duration
		want string // "" accepted, else a word of the reason
	}{
		{-10 * time.Second, 10 * time.Second, ""},
		{-10*time.Second - time.Millisecond, 10 * time.Second, "ahead"},
		{40*time.Second - time.Millisecond, 10 * time.Second, ""},
		{40 * time.Second, 10 * time.Second, "ago"},
		{0, -1, ""},
		{30*time.Second - time.Millisecond, -1, ""},
		{30 * time.Second, -1, "ago"},
		{-time.Millisecond, -1, "ahead"},
		{59 * time.Second, 0, ""}, // the default tolerance, 30 s
		{60 * time.Second, 0, "ago"},
	} {
		rep := dynamic.Inspect(code, f.kr, epoch.Add(c.at), dynamic.Options{Tolerance: c.tol})
		if c.want == "" && !rep.Acceptable(false) {
			t.Errorf("at %v tolerance %v: refused: %s", c.at, c.tol, rep.Copied)
		}
		if c.want != "" && (rep.Acceptable(false) || !strings.HasPrefix(rep.Copied, "copied: ") || !strings.Contains(rep.Copied, c.want)) {
			t.Errorf("at %v tolerance %v: copied %q, want a refusal saying %q", c.at, c.tol, rep.Copied, c.want)
		}
	}
}

// TestExpiredWindow: a screenshot two minutes old is refused as copied
// with the window's times, though the ticket itself is valid.
func TestExpiredWindow(t *testing.T) {
	f := newFixture(t, ticketA, newDevice(t))
	rep := dynamic.Inspect(f.code(t, epoch), f.kr, epoch.Add(2*time.Minute), dynamic.Options{})
	if rep.Acceptable(false) || rep.State != barcode.StateValid || !rep.Genuine {
		t.Fatalf("old window: acceptable %v state %s genuine %v", rep.Acceptable(false), rep.State, rep.Genuine)
	}
	want := "copied: the code is from 11:00:00–11:00:30 CET, 1m30s ago; a live ticket shows the current one (screenshot or recording)"
	if rep.Copied != want {
		t.Errorf("reason %q, want %q", rep.Copied, want)
	}
	if !strings.HasPrefix(rep.String(), "COPIED: the code is from") {
		t.Errorf("report: %s", rep)
	}
}

// TestReplayedFromAnotherTicket: the window signature of ticket B's phone
// put under ticket A's payload, A's payload signed by another phone, and
// A's code with a forged device key are all refused as copied or forged.
func TestReplayedFromAnotherTicket(t *testing.T) {
	a, b := newFixture(t, ticketA, newDevice(t)), newFixture(t, ticketB, newDevice(t))
	codeB := b.code(t, epoch)
	sigB := codeB[len(codeB)-dynamic.SigLen:]
	codeA := a.code(t, epoch)
	spliced := append(append([]byte(nil), codeA[:len(codeA)-dynamic.SigLen]...), sigB...)
	rep := dynamic.Inspect(spliced, a.kr, epoch, dynamic.Options{})
	if rep.Acceptable(false) || !strings.Contains(rep.Copied, "not signed by the phone this ticket is bound to") {
		t.Errorf("spliced signature: %q", rep.Copied)
	}
	// Another phone (fresh key, the copy of the page) signs A's payload.
	other, err := dynamictest.Build(a.static, dynamictest.WindowAt(epoch, 30), newDevice(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep := dynamic.Inspect(other, a.kr, epoch, dynamic.Options{}); rep.Acceptable(false) || !strings.HasPrefix(rep.Copied, "copied: ") {
		t.Errorf("other phone: %q", rep.Copied)
	}
	// Swapping the device key inside the payload breaks farebox's signature.
	forged := append([]byte(nil), codeA...)
	forged[len(forged)-dynamic.SigLen-4-64-10] ^= 1
	if rep := dynamic.Inspect(forged, a.kr, epoch, dynamic.Options{}); rep.Genuine {
		t.Errorf("altered payload genuine")
	}
	// The same window index shifted by one no longer verifies.
	shifted := append([]byte(nil), codeA...)
	shifted[len(shifted)-dynamic.SigLen-1]++
	if rep := dynamic.Inspect(shifted, a.kr, epoch, dynamic.Options{}); rep.Acceptable(false) || !strings.Contains(rep.Copied, "not signed") {
		t.Errorf("shifted window: %q", rep.Copied)
	}
}

// TestStaticPayloadOfDynamicTicket: the farebox payload of a dynamic ticket
// on its own (bound or not) is genuine but never acceptable, and an
// unbound payload inside a window code neither.
func TestStaticPayloadOfDynamicTicket(t *testing.T) {
	f := newFixture(t, ticketA, newDevice(t))
	rep := barcode.Inspect(f.static, f.kr, epoch)
	if !rep.Genuine || rep.Acceptable(false) || rep.Copied != barcode.CopiedStatic {
		t.Errorf("static alone: genuine %v copied %q", rep.Genuine, rep.Copied)
	}
	unbound := newFixture(t, ticketA, nil)
	code, err := dynamictest.Build(unbound.static, dynamictest.WindowAt(epoch, 30), newDevice(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep := dynamic.Inspect(code, f.kr, epoch, dynamic.Options{}); rep.Acceptable(false) || !strings.Contains(rep.Copied, "not bound") {
		t.Errorf("unbound: %q", rep.Copied)
	}
	// A static ticket wrapped in a dynamic code is not genuine.
	c := f.claims
	c.Dynamic, c.WindowSeconds, c.DeviceKey = false, 0, nil
	p, _, err := barcode.SignWith(c, f.kr, 0)
	if err != nil {
		t.Fatal(err)
	}
	wrapped, _ := dynamictest.Build(p, dynamictest.WindowAt(epoch, 30), f.device)
	if rep := dynamic.Inspect(wrapped, f.kr, epoch, dynamic.Options{}); rep.Genuine {
		t.Error("static ticket in a dynamic code is genuine")
	}
}

// TestGarbageCannotRead: bad input gives "cannot read", never a panic.
func TestGarbageCannotRead(t *testing.T) {
	f := newFixture(t, ticketA, newDevice(t))
	code := f.code(t, epoch)
	for name, in := range map[string][]byte{
		"empty": nil, "magic only": []byte("FD"), "version 2": append([]byte("FD\x02"), code[3:]...),
		"truncated": code[:len(code)-1], "trailing": append(append([]byte(nil), code...), 0),
		"length too large": append([]byte("FD\x01\xff\xff"), code[5:]...), "huge": bytes.Repeat([]byte("FD\x01"), 1000),
	} {
		rep := dynamic.Inspect(in, f.kr, epoch, dynamic.Options{})
		if rep.Genuine || !strings.HasPrefix(rep.Reason, "cannot read") {
			t.Errorf("%s: genuine %v reason %q", name, rep.Genuine, rep.Reason)
		}
	}
	// ParseInput passes a dynamic code through, raw and as base64url text.
	if got, err := barcode.ParseInput(code); err != nil || !bytes.Equal(got, code) {
		t.Errorf("ParseInput raw: %v", err)
	}
	if got, err := barcode.ParseInput([]byte(barcode.Text(code))); err != nil || !bytes.Equal(got, code) {
		t.Errorf("ParseInput text: %v", err)
	}
	png, err := barcode.PNG(code, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := barcode.ParseInput(png); err != nil || !bytes.Equal(got, code) {
		t.Errorf("ParseInput image: %v", err)
	}
}

// TestPayloadDeviceBlock: the dynamic flag's block is checked both ways.
func TestPayloadDeviceBlock(t *testing.T) {
	f := newFixture(t, ticketA, newDevice(t))
	for name, mut := range map[string]func(*barcode.Claims){
		"window 0":         func(c *barcode.Claims) { c.WindowSeconds = 0 },
		"window 256":       func(c *barcode.Claims) { c.WindowSeconds = 256 },
		"short key":        func(c *barcode.Claims) { c.DeviceKey = c.DeviceKey[:33] },
		"compressed":       func(c *barcode.Claims) { c.DeviceKey = append([]byte{2}, c.DeviceKey[1:]...) },
		"static with key":  func(c *barcode.Claims) { c.Dynamic = false },
		"static with time": func(c *barcode.Claims) { c.Dynamic, c.DeviceKey = false, nil },
	} {
		c := f.claims
		mut(&c)
		if _, _, err := barcode.SignWith(c, f.kr, 0); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
	got, err := barcode.Parse(f.static)
	if err != nil || !got.Dynamic || got.WindowSeconds != 30 || !bytes.Equal(got.DeviceKey, f.claims.DeviceKey) {
		t.Fatalf("parse: %v %+v", err, got)
	}
	// Cutting the key short is malformed, not a panic.
	body := f.static[:len(f.static)-64]
	for i := 1; i < 70; i++ {
		if _, err := barcode.Parse(append(append([]byte(nil), body[:len(body)-i]...), f.static[len(f.static)-64:]...)); err == nil {
			t.Errorf("cut %d parsed", i)
		}
	}
}

// FuzzParse: any input gives a report (genuine only for what Build made),
// never a panic.
func FuzzParse(f *testing.F) {
	fx := newFixture(f, ticketA, newDevice(f))
	code := fx.code(f, epoch)
	f.Add(code)
	f.Add(fx.static)
	f.Add([]byte("FD\x01\x00\x00"))
	f.Add(code[:20])
	f.Fuzz(func(t *testing.T, in []byte) {
		rep := dynamic.Inspect(in, fx.kr, epoch, dynamic.Options{})
		if rep.Acceptable(false) && !bytes.Equal(in, code) {
			// Only the signed code of the window passes (ECDSA signatures
			// are malleable: (r, n-s) also verifies; that is the same device).
			bc, err := dynamic.Parse(in)
			if err != nil || !bytes.Equal(bc.Static, fx.static) {
				t.Fatalf("accepted %x", in)
			}
		}
		_ = rep.String()
	})
}
