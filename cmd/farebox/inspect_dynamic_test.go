package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/dynamic"
	"github.com/farebox/farebox/internal/barcode/dynamic/dynamictest"
	"github.com/farebox/farebox/internal/blocklist"
)

// TestInspectDynamic: `farebox inspect` accepts the live code of a
// device-bound ticket (raw and as the PNG the engine would draw), refuses
// a screenshot past the window and the static payload alone as COPIED
// with the reason, honours --window-tolerance, and says "cannot read" for
// a damaged dynamic code.
func TestInspectDynamic(t *testing.T) {
	t.Parallel()
	dir, _, sign := dynamicSigner(t)
	device := dynamictest.NewDevice(t)
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	static := sign(device)
	code := device.Code(t, static, at, 30)
	png, err := barcode.PNG(code, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"FAREBOX_INSPECTION_KEYS": dir}
	runInspectCases(t, env, []inspectCase{
		{"live code", code, []string{"--at", "2026-11-29T10:00:10Z"}, true, "ACCEPTED"},
		{"live code image", png, []string{"--at", "2026-11-29T10:00:29Z"}, true, "ACCEPTED"},
		{"tolerance edge", code, []string{"--at", "2026-11-29T10:00:59Z"}, true, "ACCEPTED"},
		{"screenshot", code, []string{"--at", "2026-11-29T10:01:00Z"}, false, "REJECTED: copied: the code is from 11:00:00–11:00:30 CET, 30s ago"},
		{"no tolerance", code, []string{"--window-tolerance", "0s", "--at", "2026-11-29T10:00:30Z"}, false, "COPIED: the code is from"},
		{"wider tolerance", code, []string{"--window-tolerance", "2m", "--at", "2026-11-29T10:02:29Z"}, true, "ACCEPTED"},
		{"static alone", static, []string{"--at", "2026-11-29T10:00:10Z"}, false, "REJECTED: " + barcode.CopiedStatic},
		{"damaged", code[:40], []string{"--at", "2026-11-29T10:00:10Z"}, false, "NOT GENUINE: cannot read the dynamic barcode"},
	})
	if _, err := inspectRun(env, code, "--window-tolerance", "-5s", "-"); err == nil || !strings.Contains(err.Error(), "window-tolerance") {
		t.Errorf("negative tolerance: %v", err)
	}
}

// TestInspectRotatingAndMoved: `farebox inspect` checks a Google Wallet
// rotating code with --rotating-secret (live accepted, a screenshot past
// the window and a code under another secret refused as COPIED, a bad
// secret file an error), and with --blocklist refuses the code of a phone
// the ticket moved away from as REPLACED while the new phone passes.
func TestInspectRotatingAndMoved(t *testing.T) {
	t.Parallel()
	dir, kr, sign := dynamicSigner(t)
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	const tid = dynamicTicketID
	oldPhone, newPhone := dynamictest.NewDevice(t), dynamictest.NewDevice(t)
	oldStatic, newStatic := sign(oldPhone), sign(newPhone)

	secret := bytes.Repeat([]byte{0x42}, 32)
	secretFile, badFile := filepath.Join(dir, "rotating.hex"), filepath.Join(dir, "bad.hex")
	_ = os.WriteFile(secretFile, []byte(hex.EncodeToString(secret)+"\n"), 0o600)
	_ = os.WriteFile(badFile, []byte("not hex"), 0o600)
	rotating := []byte(dynamic.RotatingValue(newStatic, dynamic.TicketKey(secret, tid), at, 30))
	foreign := []byte(dynamic.RotatingValue(newStatic, dynamic.TicketKey(bytes.Repeat([]byte{1}, 32), tid), at, 30))

	body, sig, kid, err := blocklist.Sign(blocklist.List{Issuer: "farebox", GeneratedAt: "2026-11-29T10:00:00Z", LastSeq: 1,
		Devices: []blocklist.DeviceEntry{{Seq: 1, TicketID: tid, DeviceKeySHA256: blocklist.DeviceDigest(tid, oldPhone.Point),
			MovedAt: "2026-11-29T09:30:00Z", Reason: "replaced: the ticket moved to another phone", ValidUntil: "2026-11-29T11:00:00Z"}}}, kr)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := barcode.DetachedJSON("blocklist", body, sig, kid)
	listFile := filepath.Join(dir, "blocklist.json")
	_ = os.WriteFile(listFile, doc, 0o600)
	oldCode, newCode := oldPhone.Code(t, oldStatic, at, 30), newPhone.Code(t, newStatic, at, 30)

	env := map[string]string{"FAREBOX_INSPECTION_KEYS": dir, "FAREBOX_DATA_DIR": t.TempDir()}
	runInspectCases(t, env, []inspectCase{
		{"rotating live", rotating, []string{"--rotating-secret", secretFile, "--at", "2026-11-29T10:00:10Z"}, true, "ACCEPTED"},
		{"rotating screenshot", rotating, []string{"--rotating-secret", secretFile, "--at", "2026-11-29T10:02:00Z"}, false, "REJECTED: copied: the code is from"},
		{"rotating other secret", foreign, []string{"--rotating-secret", secretFile, "--at", "2026-11-29T10:00:10Z"}, false, "not made by this ticket's wallet pass"},
		{"old phone without list", oldCode, []string{"--at", "2026-11-29T10:00:10Z"}, true, "ACCEPTED"},
		{"old phone", oldCode, []string{"--blocklist", listFile, "--at", "2026-11-29T10:00:10Z"}, false,
			"REJECTED: replaced: this ticket moved to another phone on 2026-11-29 10:30 CET"},
		{"new phone", newCode, []string{"--blocklist", listFile, "--at", "2026-11-29T10:00:10Z"}, true, "ACCEPTED"},
	})
	if _, err := inspectRun(env, rotating, "--rotating-secret", badFile, "-"); err == nil || !strings.Contains(err.Error(), "rotating-secret") {
		t.Errorf("bad secret file: %v", err)
	}
}

// dynamicTicketID is the ticket of the dynamic codes `farebox inspect` is
// given here.
const dynamicTicketID = "farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f"

// dynamicSigner makes inspection keys in a directory of the test's own and
// returns it, its keyring and sign: the static payload of a live, dynamic Deutschlandticket
// (dynamicTicketID, valid 09:00–11:00 UTC on 2026-11-29, 30 s windows)
// bound to device.
func dynamicSigner(t *testing.T) (dir string, kr *barcode.Keyring, sign func(device dynamictest.Device) []byte) {
	t.Helper()
	dir = t.TempDir()
	kr, _, err := barcode.LoadOrCreateDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	return dir, kr, func(device dynamictest.Device) []byte {
		t.Helper()
		p, _, err := barcode.SignWith(barcode.Claims{TicketID: dynamicTicketID, ProductID: "p", ProductName: "Deutschlandticket",
			ValidFrom: at.Add(-time.Hour), ValidUntil: at.Add(time.Hour), FirstName: "Erika", LastName: "Muster", Environment: barcode.EnvLive,
			Dynamic: true, WindowSeconds: 30, DeviceKey: device.Point}, kr, 0)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// inspectCase is one run of `farebox inspect ARGS -` with in on standard
// input: whether it is accepted and words its output says.
type inspectCase struct {
	name  string
	in    []byte
	args  []string
	ok    bool
	words string
}

// runInspectCases runs each case with env; a refusal must be
// errNotAcceptable.
func runInspectCases(t *testing.T, env map[string]string, cases []inspectCase) {
	t.Helper()
	for _, c := range cases {
		out, err := inspectRun(env, c.in, append(c.args, "-")...)
		if c.ok != (err == nil) || (!c.ok && !errors.Is(err, errNotAcceptable)) || !strings.Contains(out, c.words) {
			t.Errorf("%s: %v\n%s", c.name, err, out)
		}
	}
}
