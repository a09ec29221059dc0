package blocklist_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/blocklist"
	"github.com/farebox/farebox/internal/testtool"
)

func keyring(t testing.TB) *barcode.Keyring {
	t.Helper()
	k := testtool.Must(barcode.GenerateKey(1, nil))(t)
	return testtool.Must(barcode.NewKeyring(k))(t)
}

func sample() blocklist.List {
	return blocklist.List{Issuer: "Verkehrsbetriebe Musterstadt", GeneratedAt: "2026-06-15T10:00:00Z", Since: 3, LastSeq: 9,
		VDV: []blocklist.VDVEntry{{Seq: 4, Org: 6310, Number: 1017, Instance: 1017, Target: blocklist.TargetTicket, Lock: blocklist.LockReject,
			Reason: "restored: replaced", ValidUntil: "2026-06-30T21:59:59Z"}},
		UIC: []blocklist.UICEntry{{Seq: 9, RICS: 1080, TicketNumber: blocklist.UICTicketNumber("farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f"),
			Reference: "farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f", Reason: "revoked: Fahrgeld erstattet", ValidUntil: "2026-06-15T23:59:59Z"}}}
}

func signed(t testing.TB, l blocklist.List, kr *barcode.Keyring) []byte {
	t.Helper()
	body, sig, kid, err := blocklist.Sign(l, kr)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := barcode.DetachedJSON("blocklist", body, sig, kid)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestSignParseRoundTrip: an exported list parses back entry for entry
// with and without the signer's keys; another key, an unsigned copy and a
// changed byte are refused when keys are given.
func TestSignParseRoundTrip(t *testing.T) {
	kr, other := keyring(t), keyring(t)
	doc := signed(t, sample(), kr)
	for _, keys := range []*barcode.Keyring{kr, nil} {
		l, err := blocklist.Parse(doc, keys)
		if err != nil {
			t.Fatal(err)
		}
		if want := sample(); l.Format != blocklist.Format || l.Version != 1 || len(l.VDV) != 1 || l.VDV[0] != want.VDV[0] || len(l.UIC) != 1 || l.UIC[0] != want.UIC[0] {
			t.Errorf("parsed %+v", l)
		}
	}
	if got := blocklist.UICTicketNumber("farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f"); got != "4E6B8F001A2B3C4D5E6F" {
		t.Errorf("UIC ticket number %q", got)
	}
	unsigned := append(bytes.Clone(doc[:bytes.Index(doc, []byte(`,"signature"`))]), '}')
	for name, c := range map[string]struct {
		doc  []byte
		keys *barcode.Keyring
	}{
		"another key": {doc, other},
		"unsigned":    {unsigned, kr},
		"changed":     {bytes.Replace(doc, []byte("1017"), []byte("1018"), 1), kr},
	} {
		if _, err := blocklist.Parse(c.doc, c.keys); apperr.As(err) == nil || apperr.As(err).Code != blocklist.CodeBlocklistSignature {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := blocklist.Parse(unsigned, nil); err != nil {
		t.Errorf("unsigned without keys: %v", err)
	}
}

// TestParseRefusals: each malformed field is refused with
// invalid_blocklist naming it; the bounds with blocklist_too_large.
func TestParseRefusals(t *testing.T) {
	for field, edit := range map[string]func(l *blocklist.List){
		"/blocklist/issuer":              func(l *blocklist.List) { l.Issuer = "" },
		"/blocklist/last_seq":            func(l *blocklist.List) { l.LastSeq = 1 },
		"/blocklist/vdv/0/org":           func(l *blocklist.List) { l.VDV[0].Org = 70000 },
		"/blocklist/vdv/0/number":        func(l *blocklist.List) { l.VDV[0].Number = 0 },
		"/blocklist/vdv/0/target":        func(l *blocklist.List) { l.VDV[0].Target = "card" },
		"/blocklist/vdv/0/lock":          func(l *blocklist.List) { l.VDV[0].Lock = "" },
		"/blocklist/vdv/0/reason":        func(l *blocklist.List) { l.VDV[0].Reason = strings.Repeat("x", 201) },
		"/blocklist/vdv/0/valid_until":   func(l *blocklist.List) { l.VDV[0].ValidUntil = "tomorrow" },
		"/blocklist/vdv/0/seq":           func(l *blocklist.List) { l.VDV[0].Seq = -1 },
		"/blocklist/uic/0/rics":          func(l *blocklist.List) { l.UIC[0].RICS = 10000 },
		"/blocklist/uic/0/ticket_number": func(l *blocklist.List) { l.UIC[0].TicketNumber = "with space" },
		"/blocklist/uic/0/reference":     func(l *blocklist.List) { l.UIC[0].Reference = "ü" },
		"/blocklist/uic/0/reason":        func(l *blocklist.List) { l.UIC[0].Reason = "line\nbreak" },
	} {
		l := sample()
		edit(&l)
		_, err := blocklist.Parse(signed(t, l, keyring(t)), nil)
		e := apperr.As(err)
		if e == nil || e.Code != blocklist.CodeInvalidBlocklist || len(e.Details) != 1 || e.Details[0].Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
	if _, err := blocklist.Parse(make([]byte, blocklist.MaxBytes+1), nil); apperr.As(err) == nil || apperr.As(err).Code != blocklist.CodeBlocklistTooLarge {
		t.Errorf("%d bytes: %v", blocklist.MaxBytes+1, err)
	}
}

// TestParseEntryBound: one entry more than MaxEntries (in fewer than
// MaxBytes) is refused with blocklist_too_large.
func TestParseEntryBound(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Load)
	l := sample()
	for len(l.VDV) <= blocklist.MaxEntries {
		l.VDV = append(l.VDV, l.VDV[0])
	}
	if _, err := blocklist.Parse(signed(t, l, keyring(t)), nil); apperr.As(err) == nil || apperr.As(err).Code != blocklist.CodeBlocklistTooLarge {
		t.Errorf("%d entries: %v", len(l.VDV), err)
	}
}

// FuzzParse: no input panics Parse, and whatever it accepts holds only
// valid entries within the bounds and parses the same again.
func FuzzParse(f *testing.F) {
	kr := keyring(f)
	f.Add(signed(f, sample(), kr))
	f.Add([]byte(`{"blocklist":{"format":"farebox-blocklist","version":1,"issuer":"x","generated_at":"","since":0,"last_seq":0,"more":false,"vdv":[],"uic":[]}}`))
	f.Add([]byte(`{"blocklist":[]}`))
	f.Add([]byte(`{"blocklist":{"vdv":[{"org":1e400}]}}`))
	f.Add([]byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := blocklist.Parse(data, nil)
		if err != nil {
			if apperr.As(err) == nil {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		if len(l.VDV)+len(l.UIC) > blocklist.MaxEntries {
			t.Fatalf("%d entries accepted", len(l.VDV)+len(l.UIC))
		}
		for _, e := range l.VDV {
			if e.Org < 1 || e.Org > 65535 || e.Number == 0 || e.Lock != blocklist.LockReject {
				t.Fatalf("accepted %+v", e)
			}
		}
		for _, e := range l.UIC {
			if e.RICS < 1 || e.RICS > 9999 || e.TicketNumber == "" || len(e.TicketNumber) > blocklist.MaxTicketNum {
				t.Fatalf("accepted %+v", e)
			}
		}
		if _, err := blocklist.Parse(data, nil); err != nil {
			t.Fatalf("accepted once, refused again: %v", err)
		}
	})
}
