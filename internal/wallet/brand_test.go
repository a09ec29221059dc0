package wallet

import (
	"strings"
	"testing"
)

func TestParseColor(t *testing.T) {
	for in, want := range map[string]Color{"#005c44": {0, 92, 68}, "#FFFFFF": {255, 255, 255}, "rgb(0, 92, 68)": {0, 92, 68},
		" rgb(255,255,255) ": {255, 255, 255}, "rgb(0,0,0)": {}} {
		if c, err := ParseColor(in); err != nil || c != want {
			t.Errorf("%q: %v %v", in, c, err)
		}
	}
	for _, bad := range []string{"", "green", "#05c44", "#005c444", "rgb(256, 0, 0)", "rgb(-1, 0, 0)", "rgba(0,0,0,1)", "#00GG00"} {
		if _, err := ParseColor(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if c := (Color{0, 92, 68}); c.RGB() != "rgb(0, 92, 68)" || c.Hex() != "#005c44" {
		t.Errorf("%s %s", c.RGB(), c.Hex())
	}
	if r := Contrast(Color{255, 255, 255}, Color{}); r < 20.99 || r > 21.01 {
		t.Errorf("white on black %.2f", r)
	}
	d := DevelopmentBrand()
	if Contrast(d.Foreground, d.Background) < MinContrast || Contrast(d.Label, d.Background) < MinContrast {
		t.Error("the development brand fails its own contrast rule")
	}
}

func TestLoadBrand(t *testing.T) {
	b, err := LoadBrand(BrandSettings{})
	if err != nil || !b.Development || b.Organization != "farebox" || b.Background != (Color{0, 92, 68}) {
		t.Errorf("default: %+v %v", b, err)
	}
	b, err = LoadBrand(BrandSettings{Organization: " VMS "})
	if err != nil || b.Development || b.Organization != "VMS" || b.Operator != "VMS" || b.Background != (Color{0, 92, 68}) {
		t.Errorf("organisation only: %+v %v", b, err)
	}
	_, err = LoadBrand(BrandSettings{Organization: strings.Repeat("x", 101), Operator: "a\nb", Label: "#006048"})
	for _, want := range []string{"--brand-organization: at most 100 bytes", "--brand-operator: at most 100 bytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v lacks %q", err, want)
		}
	}
	if _, err := LoadBrand(BrandSettings{Organization: "VMS", Label: "#006048"}); err == nil || !strings.Contains(err.Error(), "--brand-label-color") {
		t.Errorf("unreadable label accepted: %v", err)
	}
}

func TestGermanDate(t *testing.T) {
	for in, want := range map[string]string{"1979-12-31": "31.12.1979", "2000-02-29": "29.02.2000", "": "", "1979-02-30": "1979-02-30", "31.12.1979": "31.12.1979"} {
		if got := GermanDate(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}
