package store_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/records"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceRecords(t *testing.T) { recordsConformance.run(t) }

func fxInspector(f *fixture, id, name string) records.Inspector {
	f.t.Helper()
	i := records.Inspector{ID: id, Name: name, TokenHash: "hash-" + id, TokenPrefix: "fbi_" + id, CreatedAt: fxAt}
	f.write(func(q store.Q) error { return q.InsertInspector(f.ctx, i) })
	return i
}

func fxCheck(id, inspector, client string, at time.Time) records.Inspection {
	lat, lon := 52.5, 13.25
	dev := at.Add(time.Minute)
	return records.Inspection{ID: id, InspectorID: inspector, ClientRecordID: client, TicketID: "t-" + client, BarcodeSHA256: "ab",
		Outcome: records.OutcomeValid, CheckedAt: at.Add(-time.Minute), DeviceTime: &dev, Lat: &lat, Lon: &lon, StopID: "s", ReceivedAt: at}
}

// recordsConformance: records.go (inspectors, inspection records, the
// issuance records read from the tickets).
var recordsConformance = conformanceCases{
	"InsertInspector": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		i := records.Inspector{ID: "in-1", Name: "Kontrolle Süd", TokenHash: "h1", TokenPrefix: "fbi_ab", PasswordHash: "$argon2id$x", CreatedAt: fxAt}
		checkInsert(t, f, i, func(q store.Q) error { return q.InsertInspector(f.ctx, i) },
			func(q store.Q) (records.Inspector, error) { return q.InspectorByToken(f.ctx, "h1") })
		dup := i
		dup.ID, dup.TokenHash = "in-2", "h2"
		err := s.Write(f.ctx, func(q store.Q) error { return q.InsertInspector(f.ctx, dup) })
		wantCode(t, "a second inspector of the same name", err, apperr.Conflict, store.CodeConflict)
	},
	"Inspectors": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		a, b := fxInspector(f, "in-b", "B"), fxInspector(f, "in-a", "A")
		got, err := f.read().Inspectors(f.ctx)
		if err != nil || !cmp.Equal(got, []records.Inspector{b, a}) {
			t.Errorf("Inspectors = %+v, %v; want by creation time, then id", got, err)
		}
	},
	"InspectorByToken": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		i := fxInspector(f, "in-1", "A")
		checkByID(t, i, "hash-in-1", store.CodeInspectorNotFound, func(h string) (records.Inspector, error) { return f.read().InspectorByToken(f.ctx, h) })
	},
	"InspectorByName": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		i := fxInspector(f, "in-1", "Kontrolle Süd")
		checkByID(t, i, "Kontrolle Süd", store.CodeInspectorNotFound, func(n string) (records.Inspector, error) { return f.read().InspectorByName(f.ctx, n) })
	},
	"SetInspectorPassword": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		fxInspector(f, "in-1", "A")
		other := fxInspector(f, "in-2", "B")
		for _, c := range []struct {
			name, phc string
			want      bool
		}{{"A", "$argon2id$one", true}, {"in-1", "$argon2id$two", true}, {"nobody", "$argon2id$x", false}} {
			var ok bool
			f.write(func(q store.Q) (err error) {
				ok, err = q.SetInspectorPassword(f.ctx, c.name, c.phc)
				return err
			})
			if ok != c.want {
				t.Errorf("SetInspectorPassword(%s) = %v, want %v", c.name, ok, c.want)
			}
		}
		if got, _ := f.read().InspectorByName(f.ctx, "A"); got.PasswordHash != "$argon2id$two" {
			t.Errorf("password hash %q", got.PasswordHash)
		}
		if g, _ := f.read().InspectorByName(f.ctx, "B"); !cmp.Equal(g, other) {
			t.Errorf("another inspector changed: %+v", g)
		}
		f.write(func(q store.Q) error { _, err := q.RevokeInspector(f.ctx, "A", fxAt); return err })
		var ok bool
		f.write(func(q store.Q) (err error) {
			ok, err = q.SetInspectorPassword(f.ctx, "A", "$argon2id$three")
			return err
		})
		if ok {
			t.Error("a revoked inspector got a password")
		}
	},
	"RevokeInspector": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		fxInspector(f, "in-1", "A")
		other := fxInspector(f, "in-2", "B")
		for _, c := range []struct {
			name string
			want bool
		}{{"A", true}, {"in-1", false}, {"nobody", false}} {
			var ok bool
			f.write(func(q store.Q) (err error) {
				ok, err = q.RevokeInspector(f.ctx, c.name, fxAt.Add(time.Hour))
				return err
			})
			if ok != c.want {
				t.Errorf("RevokeInspector(%s) = %v, want %v", c.name, ok, c.want)
			}
		}
		got, _ := f.read().InspectorByToken(f.ctx, "hash-in-1")
		if got.RevokedAt == nil || !got.RevokedAt.Equal(fxAt.Add(time.Hour)) {
			t.Errorf("revoked_at %v", got.RevokedAt)
		}
		if g, _ := f.read().InspectorByToken(f.ctx, "hash-in-2"); !cmp.Equal(g, other) {
			t.Errorf("another inspector changed: %+v", g)
		}
	},
	"InsertInspections": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		fxInspector(f, "in-1", "A")
		fxInspector(f, "in-2", "B")
		first := []records.Inspection{fxCheck("r-1", "in-1", "c1", fxAt), fxCheck("r-2", "in-1", "c2", fxAt)}
		var ids []string
		var created []bool
		f.write(func(q store.Q) (err error) { ids, created, err = q.InsertInspections(f.ctx, first); return err })
		if !cmp.Equal(ids, []string{"r-1", "r-2"}) || !cmp.Equal(created, []bool{true, true}) {
			t.Errorf("first batch: %v %v", ids, created)
		}
		again := []records.Inspection{fxCheck("r-3", "in-1", "c2", fxAt), fxCheck("r-4", "in-2", "c2", fxAt)}
		f.write(func(q store.Q) (err error) { ids, created, err = q.InsertInspections(f.ctx, again); return err })
		if !cmp.Equal(ids, []string{"r-2", "r-4"}) || !cmp.Equal(created, []bool{false, true}) {
			t.Errorf("a repeat of the same device's record and another device's: %v %v", ids, created)
		}
		got, err := f.read().InspectionsReceived(f.ctx, fxAt, fxAt.Add(time.Second))
		if err != nil || len(got) != 3 || !cmp.Equal(got[0], first[0]) {
			t.Errorf("stored %+v, %v", got, err)
		}
	},
	"InspectionsReceived": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		fxInspector(f, "in-1", "A")
		bare := records.Inspection{ID: "r-0", InspectorID: "in-1", ClientRecordID: "c0", Outcome: records.OutcomeUnreadable, CheckedAt: fxAt, ReceivedAt: fxAt.Add(-time.Second)}
		rs := []records.Inspection{bare, fxCheck("r-1", "in-1", "c1", fxAt), fxCheck("r-2", "in-1", "c2", fxAt.Add(time.Hour)), fxCheck("r-3", "in-1", "c3", fxAt.Add(2*time.Hour))}
		f.write(func(q store.Q) error { _, _, err := q.InsertInspections(f.ctx, rs); return err })
		got, err := f.read().InspectionsReceived(f.ctx, fxAt, fxAt.Add(2*time.Hour))
		if err != nil || !cmp.Equal(got, rs[1:3]) {
			t.Errorf("[at, at+2h) = %+v, %v; want r-1, r-2 (end exclusive)", got, err)
		}
		got, _ = f.read().InspectionsReceived(f.ctx, fxAt.Add(-time.Hour), fxAt)
		if len(got) != 1 || !cmp.Equal(got[0], bare) {
			t.Errorf("a bare record reads back as %+v", got)
		}
	},
	"IssuedLive": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		live, test, other := f.order(fxAccount, account.Live, "o-1", fxAt, 3), f.order(fxAccount, account.Test, "o-2", fxAt, 1), f.order(fxOther, account.Live, "o-3", fxAt, 1)
		inv := fxAt.Add(time.Hour)
		a := f.ticket(live.Coupons[0], "t-a", fxAt, func(tk *ticketing.Ticket) { tk.InvalidatedAt = &inv })
		b := f.ticket(other.Coupons[0], "t-b", fxAt.Add(time.Minute), func(tk *ticketing.Ticket) { tk.MediumHash = store.ErasedMediumHash })
		f.ticket(live.Coupons[1], "t-late", fxAt.Add(24*time.Hour), nil)
		f.ticket(live.Coupons[2], "t-early", fxAt.Add(-time.Second), nil)
		f.ticket(test.Coupons[0], "t-test", fxAt, nil)
		got, err := f.read().IssuedLive(f.ctx, fxAt, fxAt.Add(24*time.Hour))
		want := []records.Issued{
			{TicketID: a.ID, AccountID: fxAccount, ProductID: fxProduct, ValidFrom: a.ValidFrom, ValidUntil: a.ValidUntil, IssuedAt: fxAt, Medium: a.IdentificationMedium, Invalidated: &inv},
			{TicketID: b.ID, AccountID: fxOther, ProductID: fxProduct, ValidFrom: b.ValidFrom, ValidUntil: b.ValidUntil, IssuedAt: b.CreatedAt, Medium: b.IdentificationMedium, Erased: true},
		}
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("IssuedLive: %v %s", err, cmp.Diff(want, got))
		}
	},
}
