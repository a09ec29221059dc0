package google

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/wallet"
)

var validFrom, validUntil = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func testPass(t testing.TB, env string, voided bool) wallet.Pass {
	t.Helper()
	k, _ := barcode.KeyFromSeed(1, bytes.Repeat([]byte{7}, 32))
	kr, _ := barcode.NewKeyring(k)
	payload, _, err := barcode.SignWith(barcode.Claims{
		TicketID: "farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f", ProductName: "Deutschlandticket",
		ValidFrom: validFrom, ValidUntil: validUntil, FirstName: "Max", LastName: "Mustermann",
		BirthDate: "1990-01-01", Environment: env,
	}, kr, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := wallet.NewPass(wallet.TicketView{
		TicketID: "farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f", ProductName: "Deutschlandticket",
		ZoneName: "Deutschland", ValidFrom: validFrom, ValidUntil: validUntil,
		Passenger:   wallet.Passenger{FirstName: "Max", LastName: "Mustermann", BirthDate: "1990-01-01"},
		Environment: env, Voided: voided, Barcode: payload,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testIssuer(t testing.TB, logo string) *Issuer {
	t.Helper()
	data, err := GenerateDevServiceAccount()
	if err != nil {
		t.Fatal(err)
	}
	sa, err := ParseServiceAccount(data)
	if err != nil {
		t.Fatal(err)
	}
	iss, err := NewIssuer(Config{IssuerID: "3388000000022195432", IssuerName: "farebox Verkehrsverbund",
		Origins: []string{"https://tickets.example.org"}, LogoURL: logo, Account: sa})
	if err != nil {
		t.Fatal(err)
	}
	return iss
}

// parseSaveURL splits the link as the Android SDK does and verifies the JWT.
func parseSaveURL(t *testing.T, iss *Issuer, link string, now time.Time) (map[string]any, *jwt.Token) {
	t.Helper()
	if !strings.HasPrefix(link, SaveURLPrefix) {
		t.Fatalf("link %q", link)
	}
	parts := strings.Split(link, "/save/")
	if len(parts) != 2 || strings.ContainsAny(parts[1], "\"}\n ") {
		t.Fatalf("text after /save/ is not a bare JWT: %q", parts[1])
	}
	var claims jwt.MapClaims
	tok, err := jwt.ParseWithClaims(parts[1], &claims, func(tk *jwt.Token) (any, error) {
		return iss.cfg.Account.PublicKey(), nil
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithAudience("google"), jwt.WithIssuedAt(),
		jwt.WithIssuer(iss.cfg.Account.ClientEmail), jwt.WithTimeFunc(func() time.Time { return now }))
	if err != nil {
		t.Fatalf("JWT does not verify: %v", err)
	}
	return claims, tok
}

func TestSaveURLClaims(t *testing.T) {
	iss := testIssuer(t, "https://tickets.example.org/logo.png")
	now := validFrom.Add(time.Hour)
	link, err := iss.SaveURL(testPass(t, barcode.EnvLive, false), now)
	if err != nil {
		t.Fatal(err)
	}
	claims, tok := parseSaveURL(t, iss, link, now)
	if tok.Header["alg"] != "RS256" || tok.Header["typ"] != "JWT" || tok.Header["kid"] != iss.cfg.Account.PrivateKeyID {
		t.Errorf("header %v", tok.Header)
	}
	if claims["aud"] != "google" || claims["typ"] != "savetowallet" || claims["iss"] != iss.cfg.Account.ClientEmail ||
		claims["iat"] != float64(now.Unix()) {
		t.Errorf("claims %v", claims)
	}
	if o, _ := json.Marshal(claims["origins"]); string(o) != `["https://tickets.example.org"]` {
		t.Errorf("origins %s", o)
	}
	if _, has := claims["exp"]; has {
		t.Error("exp is set")
	}
	var payload Payload
	raw, _ := json.Marshal(claims["payload"])
	if err := json.Unmarshal(raw, &payload); err != nil {
		t.Fatal(err)
	}
	if len(payload.TransitClasses) != 1 || len(payload.TransitObjects) != 1 {
		t.Fatalf("payload %s", raw)
	}
	cl, o := payload.TransitClasses[0], payload.TransitObjects[0]
	idRE := regexp.MustCompile(`^3388000000022195432\.[A-Za-z0-9._-]+$`)
	if !idRE.MatchString(cl.ID) || !idRE.MatchString(o.ID) || o.ClassID != cl.ID ||
		o.ID != "3388000000022195432.farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f" {
		t.Errorf("ids class %q object %q classId %q", cl.ID, o.ID, o.ClassID)
	}
	if cl.Logo == nil || cl.Logo.SourceURI.URI != "https://tickets.example.org/logo.png" || cl.IssuerName != "farebox Verkehrsverbund" {
		t.Errorf("class %+v", cl)
	}
	if o.State != "ACTIVE" || o.TripType != "ONE_WAY" || o.PassengerNames != "Max Mustermann" || o.TicketNumber != "T-4D5E6F" {
		t.Errorf("object %+v", o)
	}
	if o.ValidTimeInterval.Start.Date != "2026-11-01T00:00:00Z" || o.ValidTimeInterval.End.Date != "2026-12-01T00:00:00Z" {
		t.Errorf("validity %+v", o.ValidTimeInterval)
	}
	if o.TicketLeg.FareName.DefaultValue.Value != "Deutschlandticket" || o.TicketLeg.OriginName.DefaultValue.Value != "Deutschland" {
		t.Errorf("leg %+v", o.TicketLeg)
	}
	if o.Barcode.Type != "AZTEC" || o.Barcode.AlternateText != "T-4D5E6F" {
		t.Errorf("barcode %+v", o.Barcode)
	}
	got, err := barcode.FromText(o.Barcode.Value)
	if err != nil || !bytes.Equal(got, testPass(t, barcode.EnvLive, false).Barcode) {
		t.Errorf("barcode value does not carry the payload: %v", err)
	}
	if len(o.TextModulesData) != 1 || o.TextModulesData[0].Body != "01.01.1990" {
		t.Errorf("text modules %+v", o.TextModulesData)
	}
	t.Logf("save link length with class: %d characters", len(link))
}

func TestStatesAndTestMarker(t *testing.T) {
	iss := testIssuer(t, "")
	for _, c := range []struct {
		env    string
		voided bool
		now    time.Time
		want   string
	}{
		{barcode.EnvTest, false, validFrom, "ACTIVE"},
		{barcode.EnvLive, true, validFrom, "INACTIVE"},
		{barcode.EnvLive, false, validUntil, "EXPIRED"},
	} {
		link, err := iss.SaveURL(testPass(t, c.env, c.voided), c.now)
		if err != nil {
			t.Fatal(err)
		}
		claims, _ := parseSaveURL(t, iss, link, c.now)
		raw, _ := json.Marshal(claims["payload"])
		var p Payload
		_ = json.Unmarshal(raw, &p)
		if len(p.TransitClasses) != 0 {
			t.Error("class sent without a logo URL")
		}
		o := p.TransitObjects[0]
		if o.State != c.want {
			t.Errorf("%+v: state %s", c, o.State)
		}
		hasTest := false
		for _, m := range o.TextModulesData {
			hasTest = hasTest || m.ID == "environment" && m.Header == "TEST"
		}
		if hasTest != (c.env == barcode.EnvTest) {
			t.Errorf("%+v: TEST marker %v", c, hasTest)
		}
		if c.env == barcode.EnvLive && c.now == validUntil {
			t.Logf("save link length without class: %d characters", len(link))
		}
	}
}

func TestRejectsForgedTokens(t *testing.T) {
	iss := testIssuer(t, "")
	link, _ := iss.SaveURL(testPass(t, barcode.EnvLive, false), validFrom)
	jwtStr := strings.TrimPrefix(link, SaveURLPrefix)
	parts := strings.Split(jwtStr, ".")
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	other := testIssuer(t, "")
	for name, tokStr := range map[string]string{
		"alg none":       none,
		"other key":      strings.TrimPrefix(mustLink(t, other), SaveURLPrefix),
		"edited payload": parts[0] + "." + parts[1][:len(parts[1])-2] + "AA." + parts[2],
	} {
		_, err := jwt.Parse(tokStr, func(*jwt.Token) (any, error) { return iss.cfg.Account.PublicKey(), nil },
			jwt.WithValidMethods([]string{"RS256"}))
		if err == nil {
			t.Errorf("%s verifies", name)
		}
	}
}

func mustLink(t *testing.T, iss *Issuer) string {
	l, err := iss.SaveURL(testPass(t, barcode.EnvLive, false), validFrom)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestConfigValidation(t *testing.T) {
	data, _ := GenerateDevServiceAccount()
	sa, _ := ParseServiceAccount(data)
	for name, cfg := range map[string]Config{
		"issuer":  {IssuerID: "abc", Account: sa},
		"account": {IssuerID: "1"},
		"origin":  {IssuerID: "1", Account: sa, Origins: []string{"https://x.org/path"}},
		"suffix":  {IssuerID: "1", Account: sa, ClassSuffix: "a b"},
		"logo":    {IssuerID: "1", Account: sa, LogoURL: "http://x.org/l.png"},
	} {
		if _, err := NewIssuer(cfg); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, in := range map[string]string{
		"not json": "{", "no key": `{"client_email":"a@b"}`, "not pem": `{"client_email":"a@b","private_key":"xyz"}`,
	} {
		if _, err := ParseServiceAccount([]byte(in)); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDevServiceAccountPersists(t *testing.T) {
	dir := t.TempDir()
	a, created, err := LoadOrCreateDevServiceAccount(dir)
	if err != nil || !created || !a.Development || a.Type != "service_account" {
		t.Fatalf("create: %v %v", created, err)
	}
	b, created, err := LoadOrCreateDevServiceAccount(dir)
	if err != nil || created || b.PrivateKeyID != a.PrivateKeyID || !b.PublicKey().Equal(a.PublicKey()) {
		t.Fatalf("reload: %v %v", created, err)
	}
	if st, _ := os.Stat(filepath.Join(dir, DevServiceAccountFile)); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	iss, err := NewIssuer(Config{IssuerID: "1", Account: b})
	if err != nil || !iss.Development() {
		t.Fatalf("dev issuer: %v", err)
	}
	jwtStr, err := iss.SaveJWT(testPass(t, barcode.EnvLive, false), validFrom)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := base64.RawURLEncoding.DecodeString(strings.Split(jwtStr, ".")[1])
	if !strings.Contains(string(body), `"origins":[]`) {
		t.Errorf("origins without configuration must be an empty array: %s", body)
	}
}

func BenchmarkSaveURL(b *testing.B) {
	iss := testIssuer(b, "https://tickets.example.org/logo.png")
	p := testPass(b, barcode.EnvLive, false)
	for b.Loop() {
		if _, err := iss.SaveURL(p, validFrom); err != nil {
			b.Fatal(err)
		}
	}
}
