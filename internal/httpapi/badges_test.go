package httpapi_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/web"
)

// TestTravellerPageWalletBadges: with the operator's official badges
// (--wallet-badges) the ticket page shows the badge of the page's language
// as an image link, the platform's wording its text alternative; a
// language without a badge file, and a server without the directory, keep
// farebox's own buttons. Both engines.
func TestTravellerPageWalletBadges(t *testing.T) {
	dir := t.TempDir()
	svg := `<svg xmlns="http://www.w3.org/2000/svg" width="110" height="34"><rect width="110" height="34"/></svg>`
	for _, name := range []string{"apple-wallet-de.svg", "google-wallet-de.svg", "google-wallet-en.svg"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(svg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	badges, err := web.LoadBadges(dir)
	if err != nil {
		t.Fatal(err)
	}
	wallets := withWallets(t, true)
	apitest.ForEachEngine(t, apitest.Options{Configure: func(d *httpapi.Deps) { wallets(d); d.WalletBadges = badges }}, func(t *testing.T, e *apitest.Env) {
		o, _, _ := activatedTicket(t, e, e.LiveKey)
		path := "/c/" + o["coupons"].([]any)[0].(map[string]any)["id"].(string)
		de, en := newVisitor(t, e, "de"), newVisitor(t, e, "en")
		de.ua, en.ua = "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0", "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"
		p := de.must(200, "GET", path, nil)
		for _, want := range []string{`<a class="wallet-badge wallet-badge-apple" id="wallet-apple" href="/v9/ticketing/passes/apple_wallet/`,
			`<img src="data:image/svg&#43;xml;base64,`, `alt="Zu Apple Wallet hinzufügen" height="48"`, `alt="Zu Google Wallet hinzufügen"`} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("German page lacks %s:\n%s", want, p.Body[strings.Index(p.Body, `class="wallets"`):][:800])
			}
		}
		if strings.Contains(p.Body, `class="wallet wallet-`) {
			t.Error("German page: farebox's button beside the official badges")
		}
		// English: Google's badge; no English Apple badge, so our button.
		p = en.must(200, "GET", path, nil)
		if !strings.Contains(p.Body, `class="wallet wallet-apple" id="wallet-apple"`) || !strings.Contains(p.Body, `alt="Add to Google Wallet"`) ||
			strings.Contains(p.Body, `wallet-badge-apple`) {
			t.Errorf("English page:\n%.3000s", p.Body)
		}
		// Android sees only Google's.
		de.ua = "Mozilla/5.0 (Linux; Android 15; Pixel 9) AppleWebKit/537.36 Chrome/131.0 Mobile Safari/537.36"
		if p := de.must(200, "GET", path, nil); strings.Contains(p.Body, `id="wallet-apple"`) || !strings.Contains(p.Body, `wallet-badge-google`) {
			t.Errorf("Android: want Google's badge only")
		}
	})
	// Without badges: farebox's buttons.
	e := apitest.New(t, store.SQLite, apitest.Options{Configure: wallets})
	o, _, _ := activatedTicket(t, e, e.LiveKey)
	v := newVisitor(t, e, "de")
	v.ua = "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"
	p := v.must(200, "GET", "/c/"+o["coupons"].([]any)[0].(map[string]any)["id"].(string), nil)
	if strings.Contains(p.Body, `class="wallet-badge`) || !strings.Contains(p.Body, `class="wallet wallet-apple"`) || !strings.Contains(p.Body, `class="wallet wallet-google"`) {
		t.Errorf("without badges:\n%.3000s", p.Body)
	}
}
