package config

import (
	"io"
	"strings"
	"testing"
)

// TestVDVSettings: the three VDV settings come from flags or the
// environment; an issuer without the root it verifies under stops the
// start naming the flags.
func TestVDVSettings(t *testing.T) {
	env := map[string]string{"FAREBOX_VDV_ROOT": "/etc/vdv/root.cvc", "FAREBOX_VDV_CA": "/etc/vdv/ca1.cvc,/etc/vdv/ca2.cvc"}
	got, err := Load([]string{"--vdv-issuer", "6310:3000:/k.pem:/org.cvc"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || got.VDVIssuer != "6310:3000:/k.pem:/org.cvc" || got.VDVRoot != "/etc/vdv/root.cvc" || got.VDVCAs != "/etc/vdv/ca1.cvc,/etc/vdv/ca2.cvc" {
		t.Fatalf("%+v %v", got, err)
	}
	_, err = Load([]string{"--vdv-issuer", "6310:3000:/k.pem:/org.cvc"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--vdv-issuer needs --vdv-root") {
		t.Errorf("issuer without root: %v", err)
	}
	if got, err := Load(nil, func(string) string { return "" }, io.Discard); err != nil || got.VDVIssuer != "" {
		t.Errorf("default: %+v %v", got.VDVIssuer, err)
	}
}
