package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/dynamic/dynamictest"
)

// TestInspectDynamic: `farebox inspect` accepts the live code of a
// device-bound ticket (raw and as the PNG the engine would draw), refuses
// a screenshot past the window and the static payload alone as COPIED
// with the reason, honours --window-tolerance, and says "cannot read" for
// a damaged dynamic code.
func TestInspectDynamic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kr, _, err := barcode.LoadOrCreateDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	device, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := device.PublicKey.ECDH()
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	static, _, err := barcode.SignWith(barcode.Claims{TicketID: "farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f", ProductID: "p",
		ProductName: "Deutschlandticket", ValidFrom: at.Add(-time.Hour), ValidUntil: at.Add(time.Hour), FirstName: "Erika", LastName: "Muster",
		Environment: barcode.EnvLive, Dynamic: true, WindowSeconds: 30, DeviceKey: pub.Bytes()}, kr, 0)
	if err != nil {
		t.Fatal(err)
	}
	code, err := dynamictest.Build(static, dynamictest.WindowAt(at, 30), device)
	if err != nil {
		t.Fatal(err)
	}
	png, err := barcode.PNG(code, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"FAREBOX_INSPECTION_KEYS": dir}
	for _, c := range []struct {
		name  string
		in    []byte
		args  []string
		ok    bool
		words string
	}{
		{"live code", code, []string{"--at", "2026-11-29T10:00:10Z"}, true, "ACCEPTED"},
		{"live code image", png, []string{"--at", "2026-11-29T10:00:29Z"}, true, "ACCEPTED"},
		{"tolerance edge", code, []string{"--at", "2026-11-29T10:00:59Z"}, true, "ACCEPTED"},
		{"screenshot", code, []string{"--at", "2026-11-29T10:01:00Z"}, false, "REJECTED: copied: the code is from 11:00:00–11:00:30 CET, 30s ago"},
		{"no tolerance", code, []string{"--window-tolerance", "0s", "--at", "2026-11-29T10:00:30Z"}, false, "COPIED: the code is from"},
		{"wider tolerance", code, []string{"--window-tolerance", "2m", "--at", "2026-11-29T10:02:29Z"}, true, "ACCEPTED"},
		{"static alone", static, []string{"--at", "2026-11-29T10:00:10Z"}, false, "REJECTED: " + barcode.CopiedStatic},
		{"damaged", code[:40], []string{"--at", "2026-11-29T10:00:10Z"}, false, "NOT GENUINE: cannot read the dynamic barcode"},
	} {
		out, err := inspectRun(env, c.in, append(c.args, "-")...)
		if c.ok != (err == nil) || (!c.ok && !errors.Is(err, errNotAcceptable)) || !strings.Contains(out, c.words) {
			t.Errorf("%s: %v\n%s", c.name, err, out)
		}
	}
	if _, err := inspectRun(env, code, "--window-tolerance", "-5s", "-"); err == nil || !strings.Contains(err.Error(), "window-tolerance") {
		t.Errorf("negative tolerance: %v", err)
	}
}
