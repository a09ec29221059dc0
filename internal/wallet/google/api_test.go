package google

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/wallet/google/googletest"
)

func apiFixture(t *testing.T) (*Issuer, *Client, *googletest.Server) {
	t.Helper()
	iss := testIssuer(t, "https://tickets.example.org/logo.png")
	now := func() time.Time { return validFrom.Add(time.Hour) }
	srv := googletest.New(t, iss.cfg.Account.ClientEmail, iss.cfg.Account.PublicKey(), now)
	c, err := NewClient(ClientConfig{APIURL: srv.APIURL(), TokenURL: srv.TokenURL(), Account: iss.cfg.Account, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return iss, c, srv
}

// TestClientProtocol: token exchange (RS256 assertion verified by the
// stand-in), one token for many calls, insert/get/patch with Google's
// 404/409 answers mapped to apperr kinds.
func TestClientProtocol(t *testing.T) {
	iss, c, srv := apiFixture(t)
	ctx := context.Background()
	p := testPass(t, barcode.EnvLive, false)
	o := iss.Object(p, validFrom)
	if err := c.InsertObject(ctx, o); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("object before its class: %v", err)
	}
	cl, ok := iss.Class()
	if !ok {
		t.Fatal("class without logo")
	}
	if err := c.InsertClass(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if err := c.InsertClass(ctx, cl); apperr.KindOf(err) != apperr.Conflict {
		t.Errorf("second class insert: %v", err)
	}
	if err := c.InsertObject(ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := c.InsertObject(ctx, o); apperr.KindOf(err) != apperr.Conflict {
		t.Errorf("second object insert: %v", err)
	}
	voided := iss.Object(testPass(t, barcode.EnvLive, true), validFrom)
	if err := c.PatchObject(ctx, o.ID, Patch(voided)); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetObject(ctx, o.ID)
	if err != nil || got.State != "INACTIVE" || got.PassengerNames != "Max Mustermann" || got.ValidTimeInterval.End.Date != "2026-12-01T00:00:00Z" {
		t.Errorf("after patch: %+v %v", got, err)
	}
	if err := c.PatchObject(ctx, iss.ObjectID("farebox-ticket-unknown"), Patch(o)); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("patch of an unknown object: %v", err)
	}
	if _, err := c.GetObject(ctx, iss.ObjectID("farebox-ticket-unknown")); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("get of an unknown object: %v", err)
	}
	if n := srv.Exchanges(); n != 1 {
		t.Errorf("%d token exchanges for one client within the token's life", n)
	}
	// A 503 is Unavailable (the job retries it).
	srv.FailNext(1)
	if _, err := c.GetObject(ctx, o.ID); apperr.KindOf(err) != apperr.Unavailable {
		t.Errorf("503: %v", err)
	}
	// A token the server forgot: 401, one fresh exchange, success.
	srv.ExpireTokens()
	if _, err := c.GetObject(ctx, o.ID); err != nil || srv.Exchanges() != 2 {
		t.Errorf("after 401: %v, %d exchanges", err, srv.Exchanges())
	}
}

// TestClientRefusedWithoutTheKey: an attacker with another key, a wrong
// account e-mail or no token gets nothing.
func TestClientRefusedWithoutTheKey(t *testing.T) {
	iss, _, srv := apiFixture(t)
	ctx := context.Background()
	other := testIssuer(t, "")
	for name, sa := range map[string]*ServiceAccount{"other key": {ClientEmail: iss.cfg.Account.ClientEmail, key: other.cfg.Account.key},
		"other e-mail": {ClientEmail: "mallory@example.iam.gserviceaccount.com", key: iss.cfg.Account.key}} {
		c, err := NewClient(ClientConfig{APIURL: srv.APIURL(), TokenURL: srv.TokenURL(), Account: sa, Now: func() time.Time { return validFrom }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Token(ctx); apperr.KindOf(err) != apperr.Unavailable || !strings.Contains(err.Error(), "invalid_grant") {
			t.Errorf("%s: %v", name, err)
		}
	}
	res, err := http.Post(srv.APIURL()+"/transitObject", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || srv.Objects() != 0 {
		t.Errorf("without a token: %d", res.StatusCode)
	}
	for _, bad := range []ClientConfig{{Account: iss.cfg.Account, APIURL: "ftp://x"}, {Account: iss.cfg.Account, TokenURL: "nope"}, {}} {
		if _, err := NewClient(bad); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("config %+v: %v", bad, err)
		}
	}
}

// TestSkinnyLinkLength: the skinny link names only the ids and stays far
// under Google's 1,800 characters even with many origins, while the fat
// link of a ticket with long names is well over it.
func TestSkinnyLinkLength(t *testing.T) {
	iss := testIssuer(t, "https://tickets.example.org/logo.png")
	iss.cfg.Origins = []string{"https://tickets.example.org", "https://www.verkehrsverbund-beispielstadt.example.de", "https://app.example.com"}
	link, err := iss.SkinnySaveURL("farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f", validFrom)
	if err != nil {
		t.Fatal(err)
	}
	claims, _ := parseSaveURL(t, iss, link, validFrom)
	raw, _ := json.Marshal(claims["payload"])
	if string(raw) != `{"transitObjects":[{"classId":"3388000000022195432.farebox_ticket","id":"3388000000022195432.farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f"}]}` {
		t.Errorf("skinny payload %s", raw)
	}
	fat, err := iss.SaveURL(testPass(t, barcode.EnvLive, false), validFrom)
	if err != nil {
		t.Fatal(err)
	}
	if len(link) >= 1800 || len(fat) < 1800 {
		t.Errorf("skinny %d, fat %d characters", len(link), len(fat))
	}
	t.Logf("save link: skinny %d characters, fat %d characters (3 origins)", len(link), len(fat))
}
