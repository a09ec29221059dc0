package httpapi_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/uic"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
)

// profileIssuers are the UIC and VDV development issuers of the profile
// tests, made once (DSA parameters and RSA keys take a while), with the
// trust that verifies what they sign.
var profileIssuers struct {
	once sync.Once
	uic  *uic.Issuer
	vdv  *vdv.DevPKI
	err  error
}

func profileWalletIssuers(t *testing.T) (*uic.Issuer, *vdv.DevPKI) {
	t.Helper()
	profileIssuers.once.Do(func() {
		if profileIssuers.uic, profileIssuers.err = uic.GenerateDevIssuer(1, nil); profileIssuers.err != nil {
			return
		}
		profileIssuers.vdv, profileIssuers.err = vdv.GenerateDevPKI(nil, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	})
	if profileIssuers.err != nil {
		t.Fatal(profileIssuers.err)
	}
	return profileIssuers.uic, profileIssuers.vdv
}

// profileWalletOptions are walletOptions with the development UIC 918.3
// and VDV-KA issuers of profileWalletIssuers.
func profileWalletOptions(t *testing.T, advertise bool) wallets.Options {
	t.Helper()
	uicIss, vdvPKI := profileWalletIssuers(t)
	o := walletOptions(t, advertise)
	o.UIC = func() (*uic.Issuer, error) { return uicIss, nil }
	o.VDV = func() (*vdv.Issuer, error) { return vdvPKI.Issuer, nil }
	return o
}

// TestGoogleWalletBinaryBarcodes: a Google Wallet pass can carry only a
// text barcode, so a ticket whose product uses a binary barcode profile
// (uic-918-3-uflex, vdv-ka-static) is offered no Google pass: its rendering
// options omit google_wallet and say why in meta, both save-link endpoints
// answer 409 wallet_barcode_unsupported without calling Google, and its
// changes queue no Google object job (a stale one does nothing). Its Apple
// pass carries the binary barcode itself (ISO-8859-1 message), which
// verifies as a genuine UIC container or VDV barcode. A farebox-profile
// ticket beside them keeps its Google pass and updates. Both engines.
func TestGoogleWalletBinaryBarcodes(t *testing.T) {
	t.Parallel()
	uicIss, vdvPKI := profileWalletIssuers(t)
	walletsOf := func(g *googleAPI) wallets.Options {
		o := profileWalletOptions(t, true)
		o.Google, o.GoogleAPI = g.issuer, g.client
		return o
	}
	forEachEngineWithGoogle(t, walletsOf, func(t *testing.T, e *apitest.Env, g *googleAPI) {
		ctx := context.Background()

		// The catalog: single tickets keep farebox's profile, day
		// tickets carry UIC 918.3, monthly tickets VDV-KA.
		o, tids := profileTickets(t, e, profileCatalog(t, e))
		coupons := map[string]string{catalog.BarcodeFarebox: str(o.Coupons[0]["id"]), catalog.BarcodeUIC: str(o.Coupons[1]["id"]),
			catalog.BarcodeVDV: str(o.Coupons[2]["id"])}
		uicTrust := &uic.Trust{}
		uicTrust.TrustIssuer(uicIss)
		vdvTrust := &vdv.Trust{}
		if _, err := vdvTrust.AddRoot(vdvPKI.Root, true); err != nil {
			t.Fatal(err)
		}
		if _, err := vdvTrust.AddCA(vdvPKI.CA, e.Clock.Now()); err != nil {
			t.Fatal(err)
		}

		for _, profile := range []string{catalog.BarcodeFarebox, catalog.BarcodeUIC, catalog.BarcodeVDV} {
			tid := tids[profile]
			binary := profile != catalog.BarcodeFarebox
			t.Run(profile, func(t *testing.T) {
				ticket := e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + tid + ".json"}).Map(t)
				e.MustMatch("ticket", mustJSON(t, ticket), apitest.SDKTicket)
				payload := ticketPayload(t, ticket)
				meta := ticket["ticket"].(map[string]any)["meta"].(map[string]any)
				opts := strings.Join(strs(meta["available_rendering_options"]), ",")
				unavailable, listed := meta["unavailable_rendering_options"]
				if binary {
					u, _ := unavailable.([]any)
					var first map[string]any
					if len(u) == 1 {
						first, _ = u[0].(map[string]any)
					}
					if opts != "apple_wallet" || first == nil || first["option"] != "google_wallet" || first["code"] != wallets.CodeWalletBarcodeUnsupported ||
						!strings.Contains(str(first["message"]), profile) {
						t.Errorf("options %q, unavailable %v", opts, unavailable)
					}
				} else if opts != "apple_wallet,google_wallet" || listed {
					t.Errorf("options %q, unavailable %v", opts, unavailable)
				}
				// T5 (iOS and Android ask it when meta lacks the options): the same array of strings.
				t5 := e.Must(200, apitest.Req{Method: "GET", Path: "/v6/ticketing/tickets/" + tid + "/available_rendering_options.json"})
				e.MustMatch("rendering options", t5.Body, apitest.RArr(apitest.R("string")))
				var t5opts []any
				t5.JSON(t, &t5opts)
				if got := strings.Join(strs(t5opts), ","); got != opts {
					t.Errorf("T5 %q, meta %q", got, opts)
				}

				// Google: the save link (both forms) and Google's stand-in.
				calls := len(g.srv.Calls())
				objID := g.issuer.ObjectID(tid)
				for _, path := range []string{"/v9/ticketing/passes/google_wallet/" + tid + ".json", "/v6/ticketing/passes/google_wallet/" + tid} {
					r := e.Do(apitest.Req{Method: "GET", Path: path})
					if !binary {
						if r.Status != 200 && r.Status != 302 {
							t.Errorf("%s: %d %s", path, r.Status, r.Body)
						}
						continue
					}
					if r.Status != 409 {
						t.Errorf("%s: %d %s", path, r.Status, r.Body)
					} else if body := r.Map(t); body["code"] != wallets.CodeWalletBarcodeUnsupported || !strings.Contains(str(body["message"]), profile) {
						t.Errorf("%s: %s", path, r.Body)
					}
				}
				if binary {
					if n := len(g.srv.Calls()); n != calls || g.srv.Object(objID) != nil {
						t.Errorf("Google was called for a refused pass: %v", g.srv.Calls()[calls:])
					}
				} else if obj := g.srv.Object(objID); obj == nil || obj["barcode"].(map[string]any)["value"] != barcode.Text(payload) {
					t.Errorf("farebox ticket's object at Google: %v", obj)
				}

				// The traveller's page (a desktop browser sees every offered wallet).
				page := e.Do(apitest.Req{Method: "GET", Path: "/c/" + coupons[profile], NoValidate: true,
					Header: map[string]string{"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"}})
				if page.Status != 200 || !strings.Contains(string(page.Body), `id="wallet-apple"`) ||
					strings.Contains(string(page.Body), `id="wallet-google"`) != !binary {
					t.Errorf("coupon page %d: Google button shown %v for %s", page.Status, strings.Contains(string(page.Body), `id="wallet-google"`), profile)
				}

				// Apple: the pass carries the barcode bytes themselves.
				p := fetchPass(t, e, "/v9", tid)
				if len(p.Barcodes) != 1 || p.Barcodes[0].Format != "PKBarcodeFormatAztec" || p.Barcodes[0].MessageEncoding != "iso-8859-1" {
					t.Fatalf("Apple barcodes %+v", p.Barcodes)
				}
				inPass, err := barcode.FromLatin1(p.Barcodes[0].Message)
				if err != nil || !bytes.Equal(inPass, payload) {
					t.Fatalf("Apple pass barcode (%v) is not the ticket's %d-byte barcode", err, len(payload))
				}
				var rep barcode.Report
				switch profile {
				case catalog.BarcodeUIC:
					if !bytes.HasPrefix(inPass, []byte("#UT")) {
						t.Errorf("UIC barcode starts %q", inPass[:3])
					}
					rep = uic.Inspect(inPass, uicTrust, e.Clock.Now())
				case catalog.BarcodeVDV:
					if inPass[0] != 0x9E {
						t.Errorf("VDV barcode starts %#x", inPass[0])
					}
					rep = vdv.Inspect(inPass, vdvTrust, e.Clock.Now())
				default:
					rep = barcode.Inspect(inPass, walletKeyring(t), e.Clock.Now())
				}
				if !rep.Genuine || rep.Claims.TicketID != tid || rep.Claims.LastName != "Müller-Lüdenscheidt" {
					t.Errorf("the Apple pass's barcode does not inspect as genuine: %s", rep)
				}
				// The Aztec code PassKit draws from the message scans back to the same bytes.
				png, err := barcode.PNG(inPass, 4, 4)
				if err != nil {
					t.Fatal(err)
				}
				if scanned, err := barcode.ParseInput(png); err != nil || !bytes.Equal(scanned, inPass) {
					t.Errorf("drawn Apple barcode scans to %d bytes (%v)", len(scanned), err)
				}
			})
		}

		// Revoking all three queues a Google object job for the farebox
		// ticket only; it voids that ticket's saved object.
		jobsBefore, err := e.Store.Read().Jobs(ctx, passes.JobGoogleObject)
		if err != nil {
			t.Fatal(err)
		}
		for _, tid := range tids {
			if _, err := e.App.RevokeTicket(ctx, idempotency.Claim{}, tid, "Fahrgeld erstattet"); err != nil {
				t.Fatal(err)
			}
		}
		js := settleJobs(t, e, passes.JobGoogleObject)
		if len(js) != len(jobsBefore)+1 || js[len(js)-1].Payload != tids[catalog.BarcodeFarebox] || js[len(js)-1].State != jobs.StateDone {
			t.Errorf("Google object jobs after the revocations: %+v", js)
		}
		if obj := g.srv.Object(g.issuer.ObjectID(tids[catalog.BarcodeFarebox])); obj["state"] != "INACTIVE" {
			t.Errorf("farebox ticket's object after revocation: %v", obj["state"])
		}
		// A revoked binary ticket: still no Google link, and the reason.
		for _, p := range []string{catalog.BarcodeUIC, catalog.BarcodeVDV} {
			r := e.Do(apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + tids[p] + ".json"})
			if r.Status != 409 || !strings.Contains(string(r.Body), `"code":"`+wallets.CodeWalletBarcodeUnsupported+`"`) {
				t.Errorf("revoked %s ticket's link: %d %s", p, r.Status, r.Body)
			}
		}

		// A job queued for a binary ticket anyway (before an upgrade, or
		// before its product changed profile) finishes without a call.
		calls := len(g.srv.Calls())
		if err := e.Store.Write(ctx, func(q store.Q) error {
			return q.EnqueueJob(ctx, jobs.NewJob{Kind: passes.JobGoogleObject, Payload: tids[catalog.BarcodeUIC], RunAt: e.Clock.Now()}, e.Clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		js = settleJobs(t, e, passes.JobGoogleObject)
		if last := js[len(js)-1]; last.Payload != tids[catalog.BarcodeUIC] || last.State != jobs.StateDone || last.Attempts != 1 {
			t.Errorf("stale job: %+v", last)
		}
		if got := g.srv.Calls()[calls:]; len(got) != 0 {
			t.Errorf("the stale job called Google: %v", got)
		}
	})
}
