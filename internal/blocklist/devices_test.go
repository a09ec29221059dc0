package blocklist_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/blocklist"
)

const movedTicket = "farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f"

var oldKey = append([]byte{4}, bytes.Repeat([]byte{7}, 64)...)

func withDevice(e blocklist.DeviceEntry) blocklist.List {
	l := sample()
	l.Devices = []blocklist.DeviceEntry{e}
	return l
}

func device() blocklist.DeviceEntry {
	return blocklist.DeviceEntry{Seq: 8, TicketID: movedTicket, DeviceKeySHA256: blocklist.DeviceDigest(movedTicket, oldKey),
		MovedAt: "2026-06-15T10:01:00Z", Reason: "replaced: the ticket moved to another phone", ValidUntil: "2026-06-30T21:59:59Z"}
}

// TestDevicesRoundTrip: a devices entry is signed and read back; a list
// without one has no "devices" field (the document of before); CheckMoved
// marks only the listed ticket and key replaced, with the date.
func TestDevicesRoundTrip(t *testing.T) {
	kr := keyring(t)
	if strings.Contains(string(signed(t, sample(), kr)), "devices") {
		t.Error("a list without moves carries devices")
	}
	l, err := blocklist.Parse(signed(t, withDevice(device()), kr), kr)
	if err != nil || len(l.Devices) != 1 || l.Devices[0] != device() {
		t.Fatalf("parsed %+v, %v", l, err)
	}
	rep := barcode.Report{Genuine: true, State: barcode.StateValid, Claims: barcode.Claims{TicketID: movedTicket, Dynamic: true, DeviceKey: oldKey}}
	other := rep
	other.Claims.DeviceKey = append([]byte{4}, bytes.Repeat([]byte{8}, 64)...)
	otherTicket := rep
	otherTicket.Claims.TicketID = "farebox-ticket-7c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f"
	l.CheckMoved(&rep)
	l.CheckMoved(&other)
	l.CheckMoved(&otherTicket)
	if rep.Replaced != "replaced: this ticket moved to another phone on 2026-06-15 12:01 CEST; this phone's code no longer counts" || rep.Acceptable(false) {
		t.Errorf("old phone: %q", rep.Replaced)
	}
	if other.Replaced != "" || otherTicket.Replaced != "" {
		t.Errorf("not listed, but replaced: %q %q", other.Replaced, otherTicket.Replaced)
	}
	var none *blocklist.List
	none.CheckMoved(&other) // no list: nothing checked
}

// TestDevicesRefusals: every field of a devices entry is checked and the
// error names it.
func TestDevicesRefusals(t *testing.T) {
	for field, mutate := range map[string]func(*blocklist.DeviceEntry){
		"ticket_id":         func(e *blocklist.DeviceEntry) { e.TicketID = "" },
		"device_key_sha256": func(e *blocklist.DeviceEntry) { e.DeviceKeySHA256 = "AAAA" },
		"moved_at":          func(e *blocklist.DeviceEntry) { e.MovedAt = "yesterday" },
		"reason":            func(e *blocklist.DeviceEntry) { e.Reason = "" },
		"valid_until":       func(e *blocklist.DeviceEntry) { e.ValidUntil = "" },
		"seq":               func(e *blocklist.DeviceEntry) { e.Seq = -1 },
	} {
		e := device()
		mutate(&e)
		_, err := blocklist.Parse(signed(t, withDevice(e), keyring(t)), nil)
		if err == nil || !strings.Contains(err.Error(), "devices[0]."+field) {
			t.Errorf("%s: %v", field, err)
		}
	}
}
