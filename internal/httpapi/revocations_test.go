package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/idempotency"
)

// TestRevocationFeed (both engines): a ticket revoked by the operator and
// one restored away enter the signed feed in order; the ticket JSON, its
// pass and its options show it invalid with the reason; since= returns only
// what is new; the feed verifies with keys.json and a changed byte does
// not; an inspection with the feed rejects the revoked ticket; entries are
// pruned after the ticket's end while sequence numbers keep growing.
func TestRevocationFeed(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, true)}, func(t *testing.T, e *apitest.Env) {
		ctx := t.Context()
		keys, err := barcode.ParseKeySet(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Body)
		if err != nil {
			t.Fatal(err)
		}
		feed := func(query string) (*barcode.Revocations, []byte) {
			t.Helper()
			body := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/revocations.json" + query}).Body
			r, err := barcode.VerifyFeed(body, keys)
			if err != nil {
				t.Fatalf("feed%s: %v\n%s", query, err, body)
			}
			return r, body
		}
		if f, _ := feed(""); f.Feed.LastSeq != 0 || len(f.Feed.Revocations) != 0 {
			t.Fatalf("empty feed: %+v", f.Feed)
		}

		_, revokedID, revokedTicket := activatedTicket(t, e, e.LiveKey)
		order2, restoredID, _ := activatedTicket(t, e, e.LiveKey)
		_, keptID, keptTicket := activatedTicket(t, e, e.LiveKey)

		// Bad reasons and unknown tickets change nothing.
		for _, reason := range []string{"", "   ", strings.Repeat("x", 201)} {
			if _, err := e.App.RevokeTicket(ctx, idempotency.Claim{}, revokedID, reason); apperr.As(err) == nil || apperr.As(err).Code != "invalid_revocation_reason" {
				t.Errorf("reason %q: %v", reason, err)
			}
		}
		if _, err := e.App.RevokeTicket(ctx, idempotency.Claim{}, "farebox-ticket-nope", "x"); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("unknown ticket: %v", err)
		}
		if n, _ := e.Store.Read().CountRows(ctx, "revocations"); n != 0 {
			t.Fatalf("%d feed entries after refusals", n)
		}

		if _, err := e.App.RevokeTicket(ctx, idempotency.Claim{}, revokedID, "Fahrgeld erstattet <&>"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.App.RevokeTicket(ctx, idempotency.Claim{}, revokedID, "again"); apperr.KindOf(err) != apperr.Conflict {
			t.Errorf("second revocation: %v", err)
		}
		coupon := order2["coupons"].([]any)[0].(map[string]any)["id"].(string)
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders/" + order2["order_id"].(string) + "/restore.json", Key: e.LiveKey,
			Body: map[string]any{"restore_secret": order2["restore_secret"], "coupon_ids": []string{coupon}}})

		// The ticket JSON says invalid and why; the engine's properties carry it.
		tk := ticket(t, e, revokedID)
		rev, _ := properties(tk)["revocation"].(map[string]any)
		if tk["valid"] != false || tk["revocation_reason"] != "revoked: Fahrgeld erstattet <&>" || rev["kind"] != "revoked" ||
			rev["reason"] != "Fahrgeld erstattet <&>" || rev["revoked_at"] != "2026-06-15T10:00:00Z" ||
			len(strs(tk["ticket"].(map[string]any)["meta"].(map[string]any)["available_rendering_options"])) != 0 {
			t.Errorf("revoked ticket: valid=%v reason=%v revocation=%v", tk["valid"], tk["revocation_reason"], rev)
		}
		if rt := ticket(t, e, restoredID); rt["valid"] != false || !strings.HasPrefix(str(rt["revocation_reason"]), "restored: ") {
			t.Errorf("restored-away ticket: %v %v", rt["valid"], rt["revocation_reason"])
		}
		if kt := ticket(t, e, keptID); kt["valid"] != true || kt["revocation_reason"] != nil || properties(kt)["revocation"] != nil {
			t.Errorf("untouched ticket: %v %v", kt["valid"], kt["revocation_reason"])
		}
		if p := fetchPass(t, e, "/v9", revokedID); p.Voided == nil || !*p.Voided {
			t.Error("the revoked ticket's pass is not voided")
		}

		f, body := feed("")
		es := f.Feed.Revocations
		if f.Feed.LastSeq != 2 || len(es) != 2 || es[0].Seq != 1 || es[0].TicketID != revokedID || es[0].Kind != "revoked" ||
			es[0].Reason != "Fahrgeld erstattet <&>" || es[0].ValidUntil != revokedTicket["valid_until"] ||
			es[1].Seq != 2 || es[1].TicketID != restoredID || es[1].Kind != "restored" {
			t.Fatalf("feed: %s", body)
		}
		// With Accept-Encoding: gzip the same signed bytes arrive compressed.
		for _, ae := range []string{"gzip", "br, gzip;q=0.5", "deflate, GZIP"} {
			zr := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/revocations.json", Header: map[string]string{"Accept-Encoding": ae}, NoValidate: true})
			if zr.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("%s: Content-Encoding %q", ae, zr.Header.Get("Content-Encoding"))
			}
			gz, err := gzip.NewReader(bytes.NewReader(zr.Body))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(gz)
			if err != nil || !bytes.Equal(bytes.TrimSpace(plain), bytes.TrimSpace(body)) {
				t.Errorf("%s: gzip body differs from the plain one: %v", ae, err)
			}
		}
		if zr := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/revocations.json", Header: map[string]string{"Accept-Encoding": "gzip;q=0, identity"}}); zr.Header.Get("Content-Encoding") != "" {
			t.Errorf("gzip;q=0 answered with %q", zr.Header.Get("Content-Encoding"))
		}
		if strings.Contains(string(body), coupon) {
			t.Error("the public feed names a coupon id (a credential)")
		}
		if g, _ := feed("?since=1"); g.Feed.Since != 1 || len(g.Feed.Revocations) != 1 || g.Feed.Revocations[0].Seq != 2 {
			t.Errorf("since=1: %+v", g.Feed)
		}
		if g, _ := feed("?since=2"); len(g.Feed.Revocations) != 0 || g.Feed.LastSeq != 2 {
			t.Errorf("since=2: %+v", g.Feed)
		}
		for _, q := range []string{"?since=-1", "?since=x", "?since=99999999999999999999"} {
			e.Must(400, apitest.Req{Method: "GET", Path: "/v1/inspection/revocations.json" + q})
		}
		// The signature covers the feed bytes as served.
		tampered := strings.Replace(string(body), revokedID, keptID, 1)
		if _, err := barcode.VerifyFeed([]byte(tampered), keys); err == nil {
			t.Error("a changed feed verifies")
		}
		var pretty json.RawMessage = body
		indented, _ := json.MarshalIndent(pretty, "", "  ")
		if _, err := barcode.VerifyFeed(indented, keys); err == nil {
			t.Error("a re-formatted feed verifies")
		}

		// Inspection with the feed: the revoked ticket is genuine but rejected, the kept one accepted.
		for id, tkt := range map[string]map[string]any{revokedID: revokedTicket, keptID: keptTicket} {
			rep := barcode.Inspect(ticketPayload(t, tkt), keys, e.Clock.Now())
			f.Check(&rep)
			if wantRevoked := id == revokedID; !rep.Genuine || (rep.Revoked != nil) != wantRevoked || rep.Acceptable(false) == wantRevoked {
				t.Errorf("%s: %+v", id, rep)
			}
			if id == revokedID && !strings.Contains(rep.String(), "REVOKED: Fahrgeld erstattet <&>") {
				t.Errorf("report: %s", rep.String())
			}
		}

		// After the tickets' end their entries are pruned (on the next
		// revocation) and never served; numbering continues.
		e.Clock.Set(time.Date(2026, 7, 2, 0, 0, 0, 0, time.UTC))
		_, _, late := monthlyCoupon(t, e) // July's ticket
		lateID := str(late["id"])
		if _, err := e.App.RevokeTicket(ctx, idempotency.Claim{}, lateID, "Kulanz"); err != nil {
			t.Fatal(err)
		}
		if n, _ := e.Store.Read().CountRows(ctx, "revocations"); n != 1 {
			t.Errorf("%d feed entries after pruning, want 1", n)
		}
		if g, _ := feed(""); g.Feed.LastSeq != 3 || len(g.Feed.Revocations) != 1 || g.Feed.Revocations[0].Seq != 3 || g.Feed.Revocations[0].TicketID != lateID {
			t.Errorf("after pruning: %+v", g.Feed)
		}
		// Revoking an already ended ticket makes it invalid without a feed entry.
		if _, err := e.App.RevokeTicket(ctx, idempotency.Claim{}, keptID, "ended anyway"); err != nil {
			t.Fatal(err)
		}
		if g, _ := feed(""); g.Feed.LastSeq != 3 {
			t.Errorf("an ended ticket entered the feed: %+v", g.Feed)
		}
	})
}

// TestRevocationFeedConcurrent (both engines): revocations racing each
// other get gap-free, distinct sequence numbers, so a device syncing with
// since= never skips one.
func TestRevocationFeedConcurrent(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, true)}, func(t *testing.T, e *apitest.Env) {
		const n = 16
		ids := make([]string, n)
		for i := range ids {
			_, ids[i], _ = activatedTicket(t, e, e.LiveKey)
		}
		errs := make(chan error, n)
		for _, id := range ids {
			go func() { _, err := e.App.RevokeTicket(t.Context(), idempotency.Claim{}, id, "Kulanz"); errs <- err }()
		}
		for range ids {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		keys, _ := barcode.ParseKeySet(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Body)
		f, err := barcode.VerifyFeed(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/revocations.json"}).Body, keys)
		if err != nil || f.Feed.LastSeq != n || len(f.Feed.Revocations) != n || len(f.ByTicket) != n {
			t.Fatalf("%v: %+v", err, f)
		}
		for i, r := range f.Feed.Revocations {
			if r.Seq != int64(i+1) {
				t.Errorf("entry %d has seq %d", i, r.Seq)
			}
		}
		for _, id := range ids {
			if _, ok := f.ByTicket[id]; !ok {
				t.Errorf("%s missing from the feed", id)
			}
		}
	})
}
