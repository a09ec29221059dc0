package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func TestLanguage(t *testing.T) {
	for in, want := range map[string]string{
		"": "en", "de": "de", "de-DE,de;q=0.9,en;q=0.8": "de", "en-US,en;q=0.9,de;q=0.8": "en",
		"fr-FR,fr;q=0.9,de;q=0.7,en;q=0.5": "de", "fr": "en", "de;q=0, en": "en", "de;q=0.5, en;q=0.6": "en",
		"DE-at": "de", "de;q=bogus, en": "en", "*": "en", strings.Repeat("x,", 5000) + "de": "de",
	} {
		if got := Language("", in); got != want {
			t.Errorf("Language(%.40q) = %s, want %s", in, got, want)
		}
	}
	// The page's switch wins over the browser; anything else is ignored.
	for _, c := range []struct{ choice, accept, want string }{
		{"de", "en-GB", "de"}, {"en", "de-DE", "en"}, {"fr", "de-DE", "de"}, {"DE", "en", "en"}, {"", "de", "de"},
	} {
		if got := Language(c.choice, c.accept); got != c.want {
			t.Errorf("Language(%q, %q) = %s, want %s", c.choice, c.accept, got, c.want)
		}
	}
}

func TestWalletButtonsPerPlatform(t *testing.T) {
	for _, c := range []struct {
		ua            string
		apple, google bool
	}{
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148", true, false},
		{"Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15", true, false},
		{"Mozilla/5.0 (Linux; Android 15; Pixel 9) AppleWebKit/537.36 Chrome/131.0 Mobile Safari/537.36", false, true},
		{"Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 Chrome/131.0 Safari/537.36", false, true},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Safari/605.1.15", true, true},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/131.0", true, true},
		{"", true, true},
	} {
		a, g := WalletButtons(PlatformOf(c.ua))
		if a != c.apple || g != c.google {
			t.Errorf("%q: apple %v google %v, want %v %v", c.ua, a, g, c.apple, c.google)
		}
	}
}

func TestCSRF(t *testing.T) {
	key := []byte("k")
	tok := CSRFToken(key, "cookie|session")
	if !CSRFValid(key, "cookie|session", tok) {
		t.Fatal("own token refused")
	}
	for _, c := range []struct{ key, binding, tok string }{
		{"k", "cookie|other", tok}, {"k2", "cookie|session", tok}, {"k", "cookie|session", ""},
		{"k", "", CSRFToken(key, "")}, {"k", "cookie|session", tok[:len(tok)-1]},
	} {
		if CSRFValid([]byte(c.key), c.binding, c.tok) {
			t.Errorf("accepted %+v", c)
		}
	}
}

func TestThrottle(t *testing.T) {
	ctx := context.Background()
	th := Throttle{Limit: 3, Window: time.Minute}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		if ok, _ := th.Allow(ctx, "a", now); !ok {
			t.Fatalf("refused after %d failures", i)
		}
		th.Fail(ctx, "a", now)
	}
	if ok, wait := th.Allow(ctx, "a", now.Add(10*time.Second)); ok || wait != 50*time.Second {
		t.Errorf("after 3 failures: %v %v", ok, wait)
	}
	if ok, _ := th.Allow(ctx, "b", now); !ok {
		t.Error("another key refused")
	}
	if ok, _ := th.Allow(ctx, "a", now.Add(time.Minute)); !ok {
		t.Error("still refused after the window")
	}
	for i := 0; i < 3; i++ {
		th.Fail(ctx, "c", now)
	}
	th.Succeed(ctx, "c")
	if ok, _ := th.Allow(ctx, "c", now); !ok {
		t.Error("refused after a success cleared the key")
	}
}

// TestMessagesComplete: every key exists in both languages, and every key
// a template names exists.
func TestMessagesComplete(t *testing.T) {
	for k := range messages["en"] {
		if _, ok := messages["de"][k]; !ok {
			t.Errorf("%s has no German text", k)
		}
	}
	for k := range messages["de"] {
		if _, ok := messages["en"][k]; !ok {
			t.Errorf("%s has no English text", k)
		}
	}
	names, _ := templateFS.ReadDir("templates")
	for _, n := range names {
		b, _ := templateFS.ReadFile("templates/" + n.Name())
		for _, part := range strings.Split(string(b), `{{t $l "`)[1:] {
			key := part[:strings.IndexByte(part, '"')]
			if _, ok := messages["en"][key]; !ok {
				t.Errorf("%s names unknown message %q", n.Name(), key)
			}
		}
	}
}

func TestRenderEscapes(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, "error", Page{Lang: "de", Title: "<b>", Error: `"><script>alert(1)</script>`, Data: "id"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "<script>") || strings.Contains(buf.String(), "<b>") {
		t.Errorf("not escaped:\n%s", buf.String())
	}
	if err := Render(&buf, "nope", Page{}); err == nil {
		t.Error("unknown page rendered")
	}
}

// TestDashboardMessages: the keys the dashboard's templates build with
// printf (per environment, section and state) exist in both languages.
func TestDashboardMessages(t *testing.T) {
	keys := []string{}
	for _, env := range []string{"live", "test"} {
		keys = append(keys, "dash.env."+env, "dash.env.switch."+env, "dash.key.create."+env)
	}
	for _, s := range DashboardSections {
		keys = append(keys, "dash."+s)
	}
	// dash_list.html's empty state names the next step per list.
	for _, s := range []string{"orders", "coupons", "tickets", "subscriptions", "invoices", "customers"} {
		keys = append(keys, "dash.empty."+s)
	}
	for _, st := range []string{"not_activated", "activated", "restored", "valid", "invalidated", "active", "cancelled", "ended"} {
		keys = append(keys, "dash.state."+st)
	}
	for _, k := range keys {
		for _, l := range []string{"en", "de"} {
			if _, ok := messages[l][k]; !ok {
				t.Errorf("%s: no %s text", k, l)
			}
		}
	}
}

// TestInlineStyleAllowed: the stylesheet a page carries inline is the one
// the policy allows by hash, byte for byte, and the policy allows no
// inline script.
func TestInlineStyleAllowed(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, "error", Page{Lang: "en", Data: "id"}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	i, j := strings.Index(html, "<style>"), strings.Index(html, "</style>")
	if i < 0 || j < i {
		t.Fatal("no inline style")
	}
	sum := sha256.Sum256([]byte(html[i+len("<style>") : j]))
	if !strings.Contains(ContentSecurityPolicy, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") {
		t.Errorf("the inline style's hash is not in %q", ContentSecurityPolicy)
	}
	if strings.Contains(ContentSecurityPolicy, "unsafe") || !strings.Contains(ContentSecurityPolicy, "script-src 'self';") {
		t.Errorf("policy %q", ContentSecurityPolicy)
	}
}

// TestFramedTicket: the frame's stylesheet goes last into the engine's head.
func TestFramedTicket(t *testing.T) {
	got := string(FramedTicket([]byte("<html><head><style>a{}</style></head><body></body></html>")))
	if !strings.HasPrefix(got, "<html><head><style>a{}</style><style>\n") || !strings.HasSuffix(got, "</style>\n</head><body></body></html>") ||
		!strings.Contains(got, "#ticket .sub { display: none; }") {
		t.Errorf("framed: %s", got)
	}
	if got := string(FramedTicket([]byte("no head"))); got != "no head" {
		t.Errorf("without a head: %s", got)
	}
}

// TestNumberAndShortDay: numbers and axis dates in the page's language.
func TestNumberAndShortDay(t *testing.T) {
	for _, c := range []struct {
		lang string
		n    int64
		want string
	}{{"en", 0, "0"}, {"en", 999, "999"}, {"en", 1000, "1,000"}, {"de", 1234567, "1.234.567"}, {"de", -1000, "-1.000"},
		{"en", 9223372036854775807, "9,223,372,036,854,775,807"}} {
		if got := Number(c.lang, c.n); got != c.want {
			t.Errorf("Number(%s, %d) = %s, want %s", c.lang, c.n, got, c.want)
		}
	}
	if ShortDay("de", "2026-11-29") != "29.11." || ShortDay("en", "2026-11-29") != "29 Nov" || ShortDay("en", "x") != "x" {
		t.Error("ShortDay")
	}
}

// TestAgo: relative times in both languages, singular and plural, the
// edges (a skewed clock a little ahead, a month back, far ahead, zero),
// always with the absolute time as title and RFC 3339 datetime.
func TestAgo(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, loc)
	at := func(d time.Duration) time.Time { return now.Add(-d) }
	for _, c := range []struct {
		lang string
		t    time.Time
		want string
	}{
		{"en", at(0), ">just now<"},
		{"en", at(-30 * time.Second), ">just now<"},
		{"de", at(59 * time.Second), ">gerade eben<"},
		{"en", at(time.Minute), ">1 minute ago<"},
		{"en", at(3 * time.Minute), ">3 minutes ago<"},
		{"de", at(3 * time.Minute), ">vor 3 Minuten<"},
		{"de", at(time.Minute + 59*time.Second), ">vor 1 Minute<"},
		{"en", at(59 * time.Minute), ">59 minutes ago<"},
		{"en", at(time.Hour), ">1 hour ago<"},
		{"de", at(23 * time.Hour), ">vor 23 Stunden<"},
		{"en", at(24 * time.Hour), ">1 day ago<"},
		{"de", at(30 * 24 * time.Hour), ">vor 30 Tagen<"},
		{"en", at(31 * 24 * time.Hour), ">29 Oct 2026 09:00 CET<"},
		{"de", at(-2 * time.Minute), ">29.11.2026 09:02 CET<"},
		{"en", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Nanosecond), ">1 Jan 0001 00:00 UTC<"},
		{"en", time.Time{}, "—"},
	} {
		got := string(Ago(c.lang, c.t, now))
		if !strings.Contains(got, c.want) {
			t.Errorf("Ago(%s, %v) = %s, want %s", c.lang, c.t, got, c.want)
		}
		if !c.t.IsZero() && (!strings.HasPrefix(got, `<time datetime="`+c.t.UTC().Format(time.RFC3339)+`" title="`+When(c.lang, c.t)+`">`) || !strings.HasSuffix(got, "</time>")) {
			t.Errorf("Ago(%s, %v) = %s: not a <time> with the absolute title", c.lang, c.t, got)
		}
	}
}
