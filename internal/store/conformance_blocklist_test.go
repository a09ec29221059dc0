package store_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/google/go-cmp/cmp"
)

// TestConformanceBlocklist: the exported and imported blocklists'
// store methods (migration 00041, docs/blocklist.md), on both engines.
func TestConformanceBlocklist(t *testing.T) { blocklistConformance.run(t) }

// blocklistTickets gives the fixture's product profile and writes three
// tickets: vdv with number 17, uic, and an invalidated one with number 18.
func blocklistTickets(f *fixture, profile string) (vdv, uic, gone ticketing.Ticket) {
	f.t.Helper()
	c := fxCatalog()
	c.Products[0].BarcodeProfile, c.Products[0].BarcodeProductNumber = profile, 9999
	f.write(func(q store.Q) error { return q.UpsertCatalog(f.ctx, c, fxAt) })
	o := f.order(fxAccount, account.Live, "o-1", fxAt, 3)
	vdv = f.ticket(o.Coupons[0], "t-vdv", fxAt, func(tk *ticketing.Ticket) { tk.VDVNumber = 17 })
	uic = f.ticket(o.Coupons[1], "t-uic-0123-4567-89ab-cdef01234567", fxAt, nil)
	gone = f.ticket(o.Coupons[2], "t-gone", fxAt, func(tk *ticketing.Ticket) { tk.VDVNumber = 18 })
	f.write(func(q store.Q) error { _, err := q.RevokeTicket(f.ctx, gone.ID, "revoked: x", fxAt); return err })
	return vdv, uic, gone
}

func blockEntry(scheme string, issuer int, number string) ticketing.BlockEntry {
	return ticketing.BlockEntry{Source: "national", Scheme: scheme, Issuer: issuer, Number: number, Target: "ticket", Reason: "lost",
		ValidUntil: fxAt.Add(48 * time.Hour)}
}

var blocklistConformance = conformanceCases{
	"AppendDeviceMove": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		revoke(f, ticketRevocation("t-1", fxAt.Add(time.Hour)))
		var seq int64
		f.write(func(q store.Q) (err error) {
			seq, err = q.AppendDeviceMove(f.ctx, ticketing.DeviceMove{TicketID: "t-2", Key: "key-a", MovedAt: fxAt, ValidUntil: fxAt.Add(time.Hour)})
			return err
		})
		if seq != 2 {
			t.Errorf("the move's number = %d, want 2 (after the revocation: one numbering)", seq)
		}
		if _, last, err := f.read().Revocations(f.ctx, 0, fxAt); err != nil || last != 2 {
			t.Errorf("the feed's last number = %d, %v; want 2", last, err)
		}
	},
	"BlocklistDeviceMoves": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		for i, until := range []time.Time{fxAt.Add(time.Hour), fxAt.Add(-time.Hour), fxAt.Add(2 * time.Hour)} {
			f.write(func(q store.Q) error {
				_, err := q.AppendDeviceMove(f.ctx, ticketing.DeviceMove{TicketID: "t-" + string(rune('a'+i)), Key: "k", MovedAt: fxAt.Add(time.Duration(i) * time.Minute), ValidUntil: until})
				return err
			})
		}
		ms, err := f.read().BlocklistDeviceMoves(f.ctx, 0, 3, 10, fxAt)
		want := []ticketing.DeviceMove{{Seq: 1, TicketID: "t-a", Key: "k", MovedAt: fxAt, ValidUntil: fxAt.Add(time.Hour)},
			{Seq: 3, TicketID: "t-c", Key: "k", MovedAt: fxAt.Add(2 * time.Minute), ValidUntil: fxAt.Add(2 * time.Hour)}}
		if err != nil || !cmp.Equal(ms, want) {
			t.Errorf("BlocklistDeviceMoves = %+v, %v (the ended one left out)", ms, err)
		}
		if ms, err := f.read().BlocklistDeviceMoves(f.ctx, 1, 2, 10, fxAt); err != nil || len(ms) != 0 {
			t.Errorf("since 1 up to 2 = %+v, %v", ms, err)
		}
		if ms, err := f.read().BlocklistDeviceMoves(f.ctx, 0, 3, 1, fxAt); err != nil || len(ms) != 1 || ms[0].Seq != 1 {
			t.Errorf("limit 1 = %+v, %v", ms, err)
		}
		f.write(func(q store.Q) error { _, err := q.PruneRevocations(f.ctx, fxAt.Add(90*time.Minute)); return err })
		if ms, err := f.read().BlocklistDeviceMoves(f.ctx, 0, 3, 10, fxAt.Add(-24*time.Hour)); err != nil || len(ms) != 1 || ms[0].Seq != 3 {
			t.Errorf("after PruneRevocations = %+v, %v", ms, err)
		}
	},
	"BlocklistRevocations": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		vdv, _, _ := blocklistTickets(f, catalog.BarcodeVDV)
		revoke(f, ticketRevocation(vdv.ID, fxAt.Add(time.Hour)), keyRevocation(3, fxAt.Add(time.Hour)), ticketRevocation("t-unknown", fxAt.Add(time.Hour)),
			ticketRevocation("t-ended", fxAt.Add(-time.Hour)))
		rs, last, err := f.read().BlocklistRevocations(f.ctx, 0, 10, fxAt)
		if err != nil || last != 4 || len(rs) != 3 {
			t.Fatalf("BlocklistRevocations = %+v, %d, %v; want 3 entries (the ended one left out), last 4", rs, last, err)
		}
		if r := rs[0]; r.TicketID != vdv.ID || r.VDVNumber != 17 || r.Barcode != catalog.BarcodeVDV || r.Seq != 1 {
			t.Errorf("ticket entry %+v", r)
		}
		if r := rs[1]; r.Kind != ticketing.RevocationKey || r.TicketID != "" || r.Barcode != "" {
			t.Errorf("key entry %+v", r)
		}
		if r := rs[2]; r.TicketID != "t-unknown" || r.Barcode != "" || r.VDVNumber != 0 {
			t.Errorf("entry of an unknown ticket %+v", r)
		}
		if rs, last, err := f.read().BlocklistRevocations(f.ctx, 1, 1, fxAt); err != nil || len(rs) != 1 || rs[0].Seq != 2 || last != 4 {
			t.Errorf("since 1, limit 1 = %+v, %d, %v", rs, last, err)
		}
	},
	"BlocklistCursor": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		if n, err := f.read().BlocklistCursor(f.ctx, "national"); err != nil || n != 0 {
			t.Errorf("cursor before any import = %d, %v", n, err)
		}
	},
	"SetBlocklistCursor": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error { return q.SetBlocklistCursor(f.ctx, "national", 41, fxAt) })
		f.write(func(q store.Q) error { return q.SetBlocklistCursor(f.ctx, "national", 43, fxAt) })
		f.write(func(q store.Q) error { return q.SetBlocklistCursor(f.ctx, "seller-b", 2, fxAt) })
		for src, want := range map[string]int64{"national": 43, "seller-b": 2} {
			if n, err := f.read().BlocklistCursor(f.ctx, src); err != nil || n != want {
				t.Errorf("cursor of %s = %d, %v; want %d", src, n, err, want)
			}
		}
	},
	"AddBlocklistEntries": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		a, b := blockEntry(ticketing.BlockVDV, 6310, "17"), blockEntry(ticketing.BlockUIC, 1080, "ABC")
		ended := blockEntry(ticketing.BlockVDV, 6310, "99")
		ended.ValidUntil = fxAt.Add(-time.Hour)
		var added []ticketing.BlockEntry
		f.write(func(q store.Q) (err error) {
			added, err = q.AddBlocklistEntries(f.ctx, []ticketing.BlockEntry{a, ended}, fxAt.Add(-2*time.Hour))
			return err
		})
		if len(added) != 2 {
			t.Errorf("first import added %+v", added)
		}
		f.write(func(q store.Q) (err error) {
			added, err = q.AddBlocklistEntries(f.ctx, []ticketing.BlockEntry{a, b}, fxAt)
			return err
		})
		if d := cmp.Diff([]ticketing.BlockEntry{b}, added); d != "" {
			t.Errorf("second import added (-want +got):\n%s", d)
		}
		got, err := f.read().BlocklistEntries(f.ctx, "")
		if d := cmp.Diff([]ticketing.BlockEntry{b, a}, got); err != nil || d != "" {
			t.Errorf("stored (the ended entry pruned) (%v; -want +got):\n%s", err, d)
		}
	},
	"MarkBlocklistEntry": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		a := blockEntry(ticketing.BlockVDV, 6310, "17")
		f.write(func(q store.Q) error {
			_, err := q.AddBlocklistEntries(f.ctx, []ticketing.BlockEntry{a}, fxAt)
			return err
		})
		f.write(func(q store.Q) error { return q.MarkBlocklistEntry(f.ctx, a, "t-1") })
		if got, err := f.read().BlocklistEntries(f.ctx, "national"); err != nil || len(got) != 1 || got[0].TicketID != "t-1" {
			t.Errorf("entries %+v, %v", got, err)
		}
	},
	"BlocklistEntries": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		a, b := blockEntry(ticketing.BlockVDV, 6310, "17"), blockEntry(ticketing.BlockVDV, 6310, "17")
		b.Source = "seller-b"
		f.write(func(q store.Q) error {
			_, err := q.AddBlocklistEntries(f.ctx, []ticketing.BlockEntry{a, b}, fxAt)
			return err
		})
		for src, want := range map[string]int{"": 2, "national": 1, "seller-b": 1, "nobody": 0} {
			if got, err := f.read().BlocklistEntries(f.ctx, src); err != nil || len(got) != want {
				t.Errorf("entries of %q = %+v, %v; want %d", src, got, err, want)
			}
		}
	},
	"ValidTicketsByVDVNumber": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		vdv, _, _ := blocklistTickets(f, catalog.BarcodeVDV)
		got, err := f.read().ValidTicketsByVDVNumber(f.ctx, []uint32{17, 18, 19}, fxAt)
		if d := cmp.Diff(map[uint32]string{17: vdv.ID}, got); err != nil || d != "" {
			t.Errorf("by number (the invalidated 18 left out) (%v; -want +got):\n%s", err, d)
		}
		if got, err := f.read().ValidTicketsByVDVNumber(f.ctx, []uint32{17}, fxAt.Add(25*time.Hour)); err != nil || len(got) != 0 {
			t.Errorf("after the ticket's end: %v, %v", got, err)
		}
	},
	"ValidTicketIDsOfProfile": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		vdv, uic, _ := blocklistTickets(f, catalog.BarcodeUIC)
		got, err := f.read().ValidTicketIDsOfProfile(f.ctx, catalog.BarcodeUIC, fxAt)
		if err != nil || len(got) != 2 || !((got[0] == vdv.ID && got[1] == uic.ID) || (got[1] == vdv.ID && got[0] == uic.ID)) {
			t.Errorf("tickets of UIC products = %v, %v", got, err)
		}
		if got, err := f.read().ValidTicketIDsOfProfile(f.ctx, catalog.BarcodeVDV, fxAt); err != nil || len(got) != 0 {
			t.Errorf("tickets of VDV products = %v, %v", got, err)
		}
	},
}
