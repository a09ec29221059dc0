package config_test

import (
	"io"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/config"
)

// TestDeliveryConfig: --smtp-url and --invoice-from (and their FAREBOX_*
// twins) configure the e-mail delivery of documents; without a URL
// nothing is sent; a malformed value is a start-up error naming the flag
// and never the password.
func TestDeliveryConfig(t *testing.T) {
	load := func(env map[string]string, args ...string) (config.Config, error) {
		return config.Load(args, func(k string) string { return env[k] }, io.Discard)
	}
	c, err := load(nil)
	if err != nil || c.SMTP != nil || c.InvoiceFrom.Address != c.Seller.ContactEmail || c.InvoiceFrom.Name != c.Seller.Name {
		t.Fatalf("defaults: %+v %+v, %v", c.SMTP, c.InvoiceFrom, err)
	}
	c, err = load(map[string]string{"FAREBOX_SMTP_URL": "smtp://mailer:p%40ss@relay.example", "FAREBOX_INVOICE_FROM": "Verkehrsverbund Süd <rechnung@vvs.example>"})
	if err != nil || c.SMTP == nil || c.SMTP.Addr != "relay.example:587" || c.SMTP.User != "mailer" || c.SMTP.Password != "p@ss" ||
		c.InvoiceFrom.Name != "Verkehrsverbund Süd" || c.InvoiceFrom.Address != "rechnung@vvs.example" {
		t.Fatalf("from the environment: %+v %+v, %v", c.SMTP, c.InvoiceFrom, err)
	}
	if c, err = load(nil, "--smtp-url", "smtp://relay.example:2525"); err != nil || c.SMTP.User != "" || c.SMTP.Addr != "relay.example:2525" {
		t.Fatalf("flag without user: %+v, %v", c.SMTP, err)
	}
	for _, bad := range [][]string{{"--smtp-url", "smtps://u:hunter2@relay"}, {"--smtp-url", "smtp://:hunter2@relay"}, {"--smtp-url", "relay:587"},
		{"--invoice-from", "not an address"}} {
		_, err := load(nil, bad...)
		if err == nil || !strings.Contains(err.Error(), bad[0]) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%v: %v", bad, err)
		}
	}
}
