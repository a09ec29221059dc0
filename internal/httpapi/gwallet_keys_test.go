package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/inspection"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/credentials"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/wallet/google"
	"github.com/farebox/farebox/internal/wallet/google/googletest"
)

// googleAPI is a service account as Google issues it (not a development
// one) whose token_uri and API point at a local stand-in of Google.
type googleAPI struct {
	srv     *googletest.Server
	issuer  *google.Issuer
	client  *google.Client
	account *google.ServiceAccount
}

// forEachEngineWithGoogle runs fn on each engine in turn against a
// server whose wallets are wallets(g), g a local Google Wallet API on the
// server's clock.
func forEachEngineWithGoogle(t *testing.T, wallets func(g *googleAPI) wallets.Options, fn func(t *testing.T, e *apitest.Env, g *googleAPI)) {
	for _, engine := range storetest.Engines {
		t.Run(string(engine), func(t *testing.T) {
			var e *apitest.Env
			g := newGoogleAPI(t, func() time.Time { return e.Clock.Now() })
			e = apitest.New(t, engine, apitest.Options{Configure: func(d *httpapi.Deps) { d.Wallets = apitest.Wallets(d, wallets(g)) }})
			fn(t, e, g)
		})
	}
}

func newGoogleAPI(t *testing.T, now func() time.Time) *googleAPI {
	t.Helper()
	raw, err := google.GenerateDevServiceAccount()
	if err != nil {
		t.Fatal(err)
	}
	const email = "wallet@farebox-tests.iam.gserviceaccount.com"
	sa0, _ := google.ParseServiceAccount(raw)
	g := &googleAPI{srv: googletest.New(t, email, sa0.PublicKey(), now)}
	sa, err := google.ParseServiceAccount(googletest.PartnerAccount(t, raw, email, g.srv.TokenURL()))
	if err != nil || sa.Development {
		t.Fatalf("service account: %v", err)
	}
	g.account = sa
	if g.issuer, err = google.NewIssuer(google.Config{IssuerID: "3388000000022000001", Origins: []string{testOrigin},
		LogoURL: "https://tickets.example.org/logo.png", Account: sa}); err != nil {
		t.Fatal(err)
	}
	if g.client, err = google.NewClient(google.ClientConfig{APIURL: g.srv.APIURL(), Account: sa, Now: now}); err != nil {
		t.Fatal(err)
	}
	return g
}

// settleJobs runs every due job, then moves the clock past any backoff and
// runs again until the queue of kind is settled (done or dead).
func settleJobs(t *testing.T, e *apitest.Env, kind string) []jobs.Record {
	t.Helper()
	ctx := context.Background()
	for range 10 {
		if _, err := e.App.Jobs.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		js, err := e.Store.Read().Jobs(ctx, kind)
		if err != nil {
			t.Fatal(err)
		}
		pending := false
		for _, j := range js {
			pending = pending || j.State == jobs.StateReady || j.State == jobs.StateRunning
		}
		if !pending {
			return js
		}
		e.Clock.Advance(time.Minute)
	}
	t.Fatal("jobs did not settle")
	return nil
}

// saveJWTPayload decodes the payload of the JWT in a save link.
func saveJWTPayload(t *testing.T, link string) map[string]any {
	t.Helper()
	parts := strings.Split(strings.TrimPrefix(link, google.SaveURLPrefix), ".")
	if len(parts) != 3 {
		t.Fatalf("link %q", link)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// TestGoogleWalletAPI: with API credentials the save link is short (class
// and object inserted first, the JWT names their ids), and every change of
// the ticket reaches the saved object through a durable job, retried after
// Google fails, never inside the request.
func TestGoogleWalletAPI(t *testing.T) {
	t.Parallel()
	wallets := func(g *googleAPI) wallets.Options {
		return wallets.Options{Inspection: walletKeyring(t), Google: g.issuer, GoogleAPI: g.client}
	}
	forEachEngineWithGoogle(t, wallets, func(t *testing.T, e *apitest.Env, g *googleAPI) {
		ctx := context.Background()
		_, tid, ticket := activatedTicket(t, e, e.LiveKey)
		payload := ticketPayload(t, ticket)

		link := string(e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + tid + ".json"}).Body)
		if len(link) >= 1800 {
			t.Errorf("save link is %d characters, Google's guidance is under 1,800", len(link))
		}
		t.Logf("short save link: %d characters", len(link))
		objs := saveJWTPayload(t, link)["payload"].(map[string]any)["transitObjects"].([]any)
		objID := g.issuer.ObjectID(tid)
		if o := objs[0].(map[string]any); len(objs) != 1 || len(o) != 2 || o["id"] != objID || o["classId"] != g.issuer.ClassID() {
			t.Errorf("skinny payload: %v", objs)
		}
		if loc := e.Must(302, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + tid}).Header.Get("Location"); len(loc) >= 1800 ||
			!strings.HasPrefix(loc, google.SaveURLPrefix) {
			t.Errorf("redirect Location %d characters", len(loc))
		}
		if !g.srv.HasClass(g.issuer.ClassID()) {
			t.Error("class not inserted")
		}
		obj := g.srv.Object(objID)
		if obj == nil || obj["state"] != "ACTIVE" || obj["barcode"].(map[string]any)["value"] != barcode.Text(payload) {
			t.Fatalf("object at Google: %v", obj)
		}
		// The second link found the object (409) and brought it up to date.
		calls := strings.Join(g.srv.Calls(), "\n")
		testtool.Contains(t, calls, "POST /transitClass 200", "POST /transitObject 200", "POST /transitObject 409", "PATCH /transitObject/"+objID+" 200")
		if n := g.srv.Exchanges(); n != 1 {
			t.Errorf("%d token exchanges; the token is cached until it expires", n)
		}

		// Revoked: the job is enqueued with the change; Google answers
		// 503 once, the job backs off and succeeds on its second run.
		g.srv.FailNext(1)
		before := len(g.srv.Calls())
		if _, err := e.App.RevokeTicket(ctx, idempotency.Claim{}, tid, "Fahrgeld erstattet"); err != nil {
			t.Fatal(err)
		}
		if len(g.srv.Calls()) != before {
			t.Error("Google was called inside the revocation")
		}
		js := settleJobs(t, e, passes.JobGoogleObject)
		if len(js) != 1 || js[0].State != jobs.StateDone || js[0].Attempts != 2 || js[0].Payload != tid {
			t.Errorf("jobs: %+v", js)
		}
		obj = g.srv.Object(objID)
		status := ""
		for _, m := range obj["textModulesData"].([]any) {
			if m.(map[string]any)["id"] == "status" {
				status = m.(map[string]any)["body"].(string)
			}
		}
		if obj["state"] != "INACTIVE" || !strings.Contains(status, "Ungültig") {
			t.Errorf("revoked object: state %v status %q", obj["state"], status)
		}
		vti := obj["validTimeInterval"].(map[string]any)
		if vti["end"].(map[string]any)["date"] != ticket["valid_until"] {
			t.Errorf("validTimeInterval %v, ticket until %v", vti, ticket["valid_until"])
		}

		// An expired token is exchanged again (401, then a fresh one).
		g.srv.ExpireTokens()
		e.Clock.Advance(2 * time.Hour) // past the cached token's life too
		_, tid2, _ := activatedTicket(t, e, e.LiveKey)
		e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + tid2 + ".json"})
		if g.srv.Object(g.issuer.ObjectID(tid2)) == nil || g.srv.Exchanges() != 2 {
			t.Errorf("after token expiry: object %v, %d exchanges", g.srv.Object(g.issuer.ObjectID(tid2)) != nil, g.srv.Exchanges())
		}
		// Google down when the link is asked for: the link carries the
		// whole object instead (still 200, still saveable).
		g.srv.FailNext(1)
		_, tid5, _ := activatedTicket(t, e, e.LiveKey)
		fat := string(e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + tid5 + ".json"}).Body)
		if o := saveJWTPayload(t, fat)["payload"].(map[string]any)["transitObjects"].([]any)[0].(map[string]any); o["state"] != "ACTIVE" || o["barcode"] == nil {
			t.Errorf("fallback link: %v", o)
		}
		// A ticket never saved: its update finds no object (404) and is done.
		_, tid3, _ := activatedTicket(t, e, e.LiveKey)
		if _, err := e.App.RevokeTicket(ctx, idempotency.Claim{}, tid3, "Fahrgeld erstattet"); err != nil {
			t.Fatal(err)
		}
		js = settleJobs(t, e, passes.JobGoogleObject)
		if last := js[len(js)-1]; last.Payload != tid3 || last.State != jobs.StateDone || g.srv.Object(g.issuer.ObjectID(tid3)) != nil {
			t.Errorf("unsaved ticket's job: %+v", last)
		}
		// Restored away (the traveller lost the phone): the saved pass is
		// marked replaced through the same queue.
		order4, tid4, _ := activatedTicket(t, e, e.LiveKey)
		e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + tid4 + ".json"})
		coupon4 := order4["coupons"].([]any)[0].(map[string]any)["id"].(string)
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders/" + order4["order_id"].(string) + "/restore.json", Key: e.LiveKey,
			Body: map[string]any{"restore_secret": order4["restore_secret"], "coupon_ids": []string{coupon4}}})
		settleJobs(t, e, passes.JobGoogleObject)
		obj4 := g.srv.Object(g.issuer.ObjectID(tid4))
		if b, _ := json.Marshal(obj4["textModulesData"]); obj4["state"] != "INACTIVE" || !strings.Contains(string(b), "Ersetzt") {
			t.Errorf("restored-away object: %v %s", obj4["state"], b)
		}
	})
}

// TestGoogleSaveLinkWithoutAPI: without API credentials the link carries
// the whole object as before, and ticket changes still queue jobs, which
// finish without calling anything.
func TestGoogleSaveLinkWithoutAPI(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, true)}, func(t *testing.T, e *apitest.Env) {
		_, tid, _ := activatedTicket(t, e, e.LiveKey)
		link := string(e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + tid + ".json"}).Body)
		objs := saveJWTPayload(t, link)["payload"].(map[string]any)["transitObjects"].([]any)
		if o := objs[0].(map[string]any); o["state"] != "ACTIVE" || o["barcode"] == nil {
			t.Errorf("fat object: %v", o)
		}
		t.Logf("fat save link: %d characters", len(link))
		if _, err := e.App.RevokeTicket(context.Background(), idempotency.Claim{}, tid, "Fahrgeld erstattet"); err != nil {
			t.Fatal(err)
		}
		if js := settleJobs(t, e, passes.JobGoogleObject); len(js) != 1 || js[0].State != jobs.StateDone {
			t.Errorf("jobs: %+v", js)
		}
	})
}

// keySource is where a key scenario keeps its inspection keys.
type keySource struct {
	name string
	s    func(t *testing.T, e *apitest.Env) credentials.Settings
}

// start runs a server with wallets of opts, puts the source's inspection
// keys in place and loads them; reload loads them again (after a rotation).
func (src keySource) start(t *testing.T, engine store.Engine, opts wallets.Options) (e *apitest.Env, s credentials.Settings, reload func()) {
	t.Helper()
	var w *wallets.Service
	ctx := context.Background()
	e = apitest.New(t, engine, apitest.Options{Configure: func(d *httpapi.Deps) {
		w = apitest.Wallets(d, opts)
		d.Wallets = w
	}})
	s = src.s(t, e)
	reload = func() {
		t.Helper()
		kr, _, _, err := credentials.LoadInspection(ctx, s, e.Store, e.Clock.Now(), false)
		if err != nil {
			t.Fatal(err)
		}
		w.SetInspectionKeys(kr)
	}
	if src.name == "directory" {
		if _, _, err := barcode.LoadOrCreateDir(s.InspectionKeys, nil); err != nil {
			t.Fatal(err)
		}
	} else if _, _, _, err := credentials.LoadInspection(ctx, s, e.Store, e.Clock.Now(), true); err != nil {
		t.Fatal(err)
	}
	reload()
	return e, s, reload
}

var keySources = []keySource{
	{"directory", func(t *testing.T, e *apitest.Env) credentials.Settings {
		return credentials.Settings{InspectionKeys: t.TempDir()}
	}},
	{"database", func(t *testing.T, e *apitest.Env) credentials.Settings {
		return credentials.Settings{DataDir: t.TempDir()}
	}},
}

// TestInspectionKeyRotationAndRevocation drives rotation and a compromise
// as an operator and a traveller meet them: the traveller's barcode keeps
// its key across a rotation; revoking that key gives the same ticket a new
// barcode signed with the current key (accepted), the old barcode is
// rejected by the revocation feed with the reason, the saved Google object
// gets the new barcode, and refused revocations change nothing.
func TestInspectionKeyRotationAndRevocation(t *testing.T) {
	t.Parallel()
	for _, src := range keySources {
		for _, engine := range storetest.Engines {
			t.Run(src.name+"/"+string(engine), func(t *testing.T) {
				var e *apitest.Env
				ctx := context.Background()
				g := newGoogleAPI(t, func() time.Time { return e.Clock.Now() })
				e, s, reload := src.start(t, engine, wallets.Options{Google: g.issuer, GoogleAPI: g.client})
				keysOf := func() *barcode.Keyring {
					kr, err := barcode.ParseKeySet(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Body)
					if err != nil {
						t.Fatal(err)
					}
					return kr
				}
				read := func(tid string) []byte {
					return ticketPayload(t, e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + tid + ".json"}).Map(t))
				}
				_, tidA, ticketA := activatedTicket(t, e, e.LiveKey)
				oldPayload := ticketPayload(t, ticketA)
				e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + tidA + ".json"}) // saved

				// The only live key cannot be revoked: there is no successor.
				for _, c := range []struct{ kid, reason, code string }{
					{"1", "kompromittiert", inspection.CodeInspectionKeyActive},
					{"x1", "kompromittiert", inspection.CodeInvalidKeyID},
					{"0", "kompromittiert", inspection.CodeInvalidKeyID},
					{"70000", "kompromittiert", inspection.CodeInvalidKeyID},
					{"999", "kompromittiert", inspection.CodeUnknownInspectionKey},
					{"1", "  ", inspection.CodeInvalidRevocationReason},
					{"1", strings.Repeat("ü", inspection.MaxKeyRevocationReason+1), inspection.CodeInvalidRevocationReason},
				} {
					_, err := inspectionKeys(e, s).Revoke(ctx, c.kid, c.reason)
					if ae := apperr.As(err); ae == nil || ae.Code != c.code {
						t.Errorf("revoke %q %.10q: %v, want %s", c.kid, c.reason, err, c.code)
					}
				}
				if _, err := inspectionKeys(e, s).Rotate(ctx, "staging", 0); apperr.As(err) == nil || apperr.As(err).Code != barcode.CodeInvalidEnvironment {
					t.Errorf("rotate staging: %v", err)
				}
				if got := read(tidA); !bytes.Equal(got, oldPayload) || len(keysOf().IDs()) != 2 {
					t.Fatal("a refused revocation changed something")
				}

				// Rotation: A keeps key 1, a new ticket B gets key 2; both published.
				r, err := inspectionKeys(e, s).Rotate(ctx, barcode.EnvLive, 0)
				if err != nil || r.New.ID != 2 || r.Old != 1 || r.Stamped != 1 || len(r.Pruned) != 0 {
					t.Fatalf("rotate: %+v %v", r, err)
				}
				reload()
				if !bytes.Equal(read(tidA), oldPayload) {
					t.Error("rotation changed the barcode of an issued ticket")
				}
				_, tidB, ticketB := activatedTicket(t, e, e.LiveKey)
				kr := keysOf()
				oldKeys := kr // what a device synced after the rotation: keys 1 and 2
				if c, err := barcode.Verify(ticketPayload(t, ticketB), kr); err != nil || c.KeyID != 2 {
					t.Errorf("new ticket: key %d (%v)", c.KeyID, err)
				}
				if c, err := barcode.Verify(oldPayload, kr); err != nil || c.KeyID != 1 {
					t.Errorf("old ticket after rotation: %v", err)
				}
				keys, err := inspectionKeys(e, s).Keys(ctx)
				if err != nil || len(keys) != 3 || keys[0].Kid != 1 || keys[0].Active || keys[0].Tickets != 1 || !keys[1].Active || keys[1].Kid != 2 {
					t.Errorf("keys list: %+v %v", keys, err)
				}
				if pruned, err := inspectionKeys(e, s).Prune(ctx); err != nil || len(pruned) != 0 {
					t.Errorf("prune with a valid ticket on key 1: %v %v", pruned, err)
				}

				// Compromise of key 1.
				rv, err := inspectionKeys(e, s).Revoke(ctx, "1", "Schlüssel kompromittiert")
				if err != nil || rv.Resigned != 1 || rv.Successor != 2 || !rv.Removed || rv.AlreadyInFeed ||
					rv.FeedUntil.Before(e.Clock.Now().Add(inspection.KeyRevocationMinFeed)) {
					t.Fatalf("revoke: %+v %v", rv, err)
				}
				reload()
				kr = keysOf()
				if _, has := kr.Lookup(1); has {
					t.Error("keys.json still publishes the revoked key")
				}
				newPayload := read(tidA)
				c, err := barcode.Verify(newPayload, kr)
				if err != nil || c.KeyID != 2 || c.TicketID != tidA {
					t.Fatalf("re-signed ticket: %+v %v", c, err)
				}
				old, _ := barcode.Verify(oldPayload, oldKeys)
				if c.ValidFrom != old.ValidFrom || c.ValidUntil != old.ValidUntil || c.FirstName != old.FirstName || c.BirthDate != old.BirthDate {
					t.Errorf("the re-signed ticket differs: %+v vs %+v", c, old)
				}
				if rep := barcode.Inspect(newPayload, kr, e.Clock.Now()); !rep.Acceptable(false) {
					t.Errorf("re-signed barcode not accepted: %s", rep)
				}
				// A device with yesterday's keys.json and today's feed rejects the
				// old barcode and says why; the new one passes.
				feedBody := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/revocations.json"}).Body
				feed, err := barcode.VerifyFeed(feedBody, oldKeys)
				if err != nil {
					t.Fatal(err)
				}
				entry, ok := feed.ByKey[1]
				if !ok || entry.Kind != "key" || entry.TicketID != "" || entry.Reason != "Schlüssel kompromittiert" {
					t.Fatalf("feed: %s", feedBody)
				}
				rep := barcode.Inspect(oldPayload, oldKeys, e.Clock.Now())
				feed.Check(&rep)
				if rep.Acceptable(false) || rep.Revoked == nil || !strings.Contains(rep.String(), "REVOKED KEY: signed with inspection key 1, revoked: Schlüssel kompromittiert") {
					t.Errorf("old barcode with the feed: %s", rep)
				}
				rep = barcode.Inspect(newPayload, oldKeys, e.Clock.Now())
				if feed.Check(&rep); !rep.Acceptable(false) {
					t.Errorf("new barcode with the feed: %s", rep)
				}
				// With today's keys the old barcode is not genuine, and the feed names the key.
				rep = barcode.Inspect(oldPayload, kr, e.Clock.Now())
				if feed.Check(&rep); rep.Genuine || rep.Revoked == nil || !strings.Contains(rep.String(), "REVOKED KEY") {
					t.Errorf("old barcode with today's keys: %s", rep)
				}
				// The saved Google pass gets the new barcode through its job.
				if js := settleJobs(t, e, passes.JobGoogleObject); len(js) != 1 || js[0].State != jobs.StateDone || js[0].Payload != tidA {
					t.Errorf("jobs: %+v", js)
				}
				if got := g.srv.Object(g.issuer.ObjectID(tidA))["barcode"].(map[string]any)["value"]; got != barcode.Text(newPayload) {
					t.Errorf("Google object barcode not updated")
				}
				// Running the revocation again finds nothing to do.
				if _, err := inspectionKeys(e, s).Revoke(ctx, "1", "Schlüssel kompromittiert"); apperr.KindOf(err) != apperr.NotFound {
					t.Errorf("second revocation: %v", err)
				}
				// The test range rotates and revokes on its own: a test ticket
				// moves from test key 32769 to 32770, never to a live key.
				_, tidT, _ := activatedTicket(t, e, e.TestKey)
				if _, err := inspectionKeys(e, s).Revoke(ctx, "32769", "Testschlüssel kompromittiert"); apperr.As(err) == nil || apperr.As(err).Code != inspection.CodeInspectionKeyActive {
					t.Errorf("revoking the only test key: %v", err)
				}
				if r, err := inspectionKeys(e, s).Rotate(ctx, barcode.EnvTest, 0); err != nil || r.New.ID != barcode.TestKeyIDBase+2 || r.Stamped != 1 {
					t.Fatalf("test rotation: %+v %v", r, err)
				}
				reload()
				if rv, err := inspectionKeys(e, s).Revoke(ctx, "32769", "Testschlüssel kompromittiert"); err != nil || rv.Resigned != 1 || rv.Successor != barcode.TestKeyIDBase+2 {
					t.Fatalf("test key revocation: %+v %v", rv, err)
				}
				reload()
				if c, err := barcode.Verify(read(tidT), keysOf()); err != nil || c.KeyID != barcode.TestKeyIDBase+2 || !c.Test() {
					t.Errorf("test ticket after its key's revocation: %+v %v", c, err)
				}
				settleJobs(t, e, passes.JobGoogleObject)
				// A rotation later: the key of A and B (2) stays while they are
				// valid; once they ended it is pruned.
				if r, err = inspectionKeys(e, s).Rotate(ctx, barcode.EnvLive, 0); err != nil || r.New.ID != 3 || r.Stamped != 1 {
					t.Fatalf("second rotation: %+v %v", r, err)
				}
				_ = tidB
				e.Clock.Set(time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC))
				pruned, err := inspectionKeys(e, s).Prune(ctx)
				if err != nil || len(pruned) != 1 || pruned[0] != 2 {
					t.Errorf("prune after the tickets ended: %v %v", pruned, err)
				}
				reload()
				if ids := keysOf().IDs(); len(ids) != 2 || ids[0] != 3 {
					t.Errorf("keys after pruning: %v", ids)
				}
			})
		}
	}
}
