package wallets_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/apptest"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/engines"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/wallet"
	"github.com/farebox/farebox/internal/wallet/apple"
)

const (
	passType   = "pass.org.farebox.test"
	webService = "https://tickets.example.org/wallet/apple"
)

// keyring is a live inspection key.
func keyring(t testing.TB) *barcode.Keyring {
	t.Helper()
	k := testtool.Must(barcode.KeyFromSeed(1, bytes.Repeat([]byte{1}, 32)))(t)
	return testtool.Must(barcode.NewKeyring(k))(t)
}

// newWallets are the wallets of o over b's database, their jobs on b's runner.
func newWallets(b *apptest.Bundle, o wallets.Options) *wallets.Service {
	w := wallets.New(store.NewView[wallets.Queries](b.Store), b.Clock, b.App.Ticket, o)
	w.HandleJobs(b.App.Jobs)
	return w
}

// is reports whether err is an apperr of kind and code.
func is(err error, kind apperr.Kind, code string) bool {
	e := apperr.As(err)
	return e != nil && e.Kind == kind && e.Code == code
}

// TestOfferKeysAndFeed: a ticket read through the wallets carries its
// signed barcode and the brand; without wallets (a nil Service) it
// carries neither, and the key set and the feed answer
// inspection_keys_not_configured. A revoked ticket enters the feed, signed
// with the serving keyring and verifiable by a device. Without Apple or
// Google credentials the passes answer wallet_not_configured. Both engines.
func TestOfferKeysAndFeed(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, b *apptest.Bundle) {
		kr := keyring(t)
		w := newWallets(b, wallets.Options{Inspection: kr})
		id := b.Activate(t, b.Order(t, b.Product(t, apptest.Single).ID).Coupons[0].ID, "")
		d := b.Ticket(t, id)

		o, err := w.Offer(d)
		if err != nil || o.Properties[engines.PropBarcode] == nil || o.Properties[engines.PropBrand] == nil || o.Unavailable != nil {
			t.Fatalf("offer: %+v %v", o, err)
		}
		if slices.Contains(o.Options, wallet.OptionAppleWallet) || slices.Contains(o.Options, wallet.OptionGoogleWallet) {
			t.Errorf("options without credentials: %v", o.Options)
		}
		var none *wallets.Service
		if o, err := none.Offer(d); err != nil || o.Properties != nil {
			t.Errorf("no wallets: %+v %v", o, err)
		}
		if _, err := none.InspectionKeys(); !is(err, apperr.Unavailable, wallets.CodeInspectionKeysNotConfigured) {
			t.Errorf("no keys: %v", err)
		}
		if _, err := none.Revocations(b.Ctx, 0); !is(err, apperr.Unavailable, wallets.CodeInspectionKeysNotConfigured) {
			t.Errorf("no keys, feed: %v", err)
		}
		if set, err := w.InspectionKeySet(); err != nil || !strings.Contains(set, `"kid": "1"`) {
			t.Errorf("key set: %s %v", set, err)
		}
		for _, pass := range []func() error{
			func() error { _, err := w.ApplePass(b.Ctx, d); return err },
			func() error { _, err := w.GoogleSaveURL(b.Ctx, d); return err },
		} {
			if err := pass(); !is(err, apperr.Unavailable, wallets.CodeWalletNotConfigured) {
				t.Errorf("pass without credentials: %v", err)
			}
		}

		if _, err := b.App.RevokeTicket(b.Ctx, idempotency.Claim{}, id, "Fahrgeld erstattet"); err != nil {
			t.Fatal(err)
		}
		f, err := w.Revocations(b.Ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := barcode.VerifyFeed(body, kr)
		if err != nil || r.ByTicket[id].Reason != "Fahrgeld erstattet" || len(r.ByTicket) != 1 {
			t.Errorf("feed %s: %+v %v", body, r, err)
		}
		if _, err := w.Revocations(b.Ctx, -1); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("since -1: %v", err)
		}
	})
}

// TestAppleWebService drives Apple's PassKit web service as a phone does:
// the first download creates the pass record; the device registers with
// the pass's token (not with another), lists the updated serials, and
// revalidates the pass by its ETag. Revoking the ticket queues the pass
// update; its job gives the pass a new tag, so the device sees the serial
// again and the pass is no longer "not modified"; the ticket no longer
// offers the pass. Unregistered, the device
// has no passes. Both engines.
func TestAppleWebService(t *testing.T) {
	creds, err := apple.GenerateDevelopment(passType, "FAREBOXTST", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	builder, err := apple.NewBuilder(apple.Config{PassTypeID: passType, TeamID: "FAREBOXTST", Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	apptest.ForEachEngine(t, func(t *testing.T, b *apptest.Bundle) {
		w := newWallets(b, wallets.Options{Inspection: keyring(t), Apple: builder, AppleWebServiceURL: webService, AdvertiseDevelopmentWallets: true})
		id := b.Activate(t, b.Order(t, b.Product(t, apptest.Single).ID).Coupons[0].ID, "")
		offered := func() []string {
			t.Helper()
			o, err := w.Offer(b.Ticket(t, id))
			if err != nil {
				t.Fatal(err)
			}
			return o.Options
		}
		if got := offered(); !slices.Equal(got, []string{wallet.OptionAppleWallet}) {
			t.Errorf("offered %v, want the Apple pass", got)
		}
		if pkpass, err := w.ApplePass(b.Ctx, b.Ticket(t, id)); err != nil || len(pkpass) == 0 {
			t.Fatalf("pass: %d bytes, %v", len(pkpass), err)
		}
		rec, ok, err := b.Store.Read().ApplePass(b.Ctx, id)
		if err != nil || !ok || rec.AuthToken == "" {
			t.Fatalf("pass record %+v %v %v", rec, ok, err)
		}
		const device, push = "device-1", "a1b2c3d4e5f60718293a4b5c6d7e8f90"
		reg := wallets.AppleRegistration{Device: device, PassType: passType, Serial: id, Token: "wrong", PushToken: push}
		if _, err := w.RegisterAppleDevice(b.Ctx, idempotency.Claim{}, reg); !is(err, apperr.Unauthenticated, wallets.CodeApplePassUnauthorized) {
			t.Errorf("wrong token: %v", err)
		}
		reg.Token = rec.AuthToken
		for _, want := range []bool{true, false} {
			if created, err := w.RegisterAppleDevice(b.Ctx, idempotency.Claim{}, reg); err != nil || created != want {
				t.Errorf("register: created %v %v, want %v", created, err, want)
			}
		}
		s, ok, err := w.UpdatedAppleSerials(b.Ctx, device, passType, "")
		if err != nil || !ok || !slices.Equal(s.SerialNumbers, []string{id}) {
			t.Fatalf("serials %+v %v %v", s, ok, err)
		}
		if _, ok, err := w.UpdatedAppleSerials(b.Ctx, device, passType, s.LastUpdated); err != nil || ok {
			t.Errorf("nothing updated since %s: %v %v", s.LastUpdated, ok, err)
		}
		req := wallets.ApplePassRequest{PassType: passType, Serial: id, Token: rec.AuthToken}
		first, err := w.LatestApplePass(b.Ctx, req)
		if err != nil || first.NotModified || len(first.Pass) == 0 {
			t.Fatalf("latest: %+v %v", first.ETag, err)
		}
		req.IfNoneMatch = first.ETag
		if a, err := w.LatestApplePass(b.Ctx, req); err != nil || !a.NotModified || a.Pass != nil {
			t.Errorf("revalidation: %+v %v", a.NotModified, err)
		}

		if _, err := b.App.RevokeTicket(b.Ctx, idempotency.Claim{}, id, "Fahrgeld erstattet"); err != nil {
			t.Fatal(err)
		}
		if got := offered(); len(got) != 0 {
			t.Errorf("a revoked ticket offers %v", got)
		}
		js, err := b.Store.Read().Jobs(b.Ctx, passes.JobApplePassUpdate)
		if err != nil || len(js) != 1 || js[0].Payload != id {
			t.Fatalf("update jobs %+v %v", js, err)
		}
		for n := 1; n > 0; {
			if n, err = b.App.Jobs.RunOnce(b.Ctx); err != nil {
				t.Fatal(err)
			}
		}
		if s2, ok, err := w.UpdatedAppleSerials(b.Ctx, device, passType, s.LastUpdated); err != nil || !ok || !slices.Equal(s2.SerialNumbers, []string{id}) {
			t.Errorf("after the revocation: %+v %v %v", s2, ok, err)
		}
		if a, err := w.LatestApplePass(b.Ctx, req); err != nil || a.NotModified || a.ETag == first.ETag {
			t.Errorf("the revoked pass is not modified: %+v %v", a.NotModified, err)
		}

		if err := w.UnregisterAppleDevice(b.Ctx, idempotency.Claim{}, device, passType, id, rec.AuthToken); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := w.UpdatedAppleSerials(b.Ctx, device, passType, ""); err != nil || ok {
			t.Errorf("unregistered device: %v %v", ok, err)
		}
		if _, _, err := w.UpdatedAppleSerials(b.Ctx, device, "pass.org.other.test", ""); !is(err, apperr.NotFound, wallets.CodeApplePassTypeUnknown) {
			t.Errorf("other pass type: %v", err)
		}
		if _, err := w.AppleLog(nil); !is(err, apperr.Invalid, wallets.CodeInvalidAppleLog) {
			t.Errorf("log without logs: %v", err)
		}
		if n, err := w.AppleLog(make([]string, wallets.MaxAppleLogMessages+1)); err != nil || n != wallets.MaxAppleLogMessages {
			t.Errorf("log of too many messages: %d %v", n, err)
		}
	})
}
