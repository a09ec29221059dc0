package invoicedoc_test

import (
	"os"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/invoicedoc"
)

// readCodes reads the codes of a testdata list: lines of codes, or
// "NAME: codes" lines; # starts a comment line.
func readCodes(t *testing.T, file string) map[string]map[string]bool {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, codes, ok := strings.Cut(line, ":")
		if !ok {
			name, codes = "", line
		}
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for _, c := range strings.Fields(codes) {
			out[name][c] = true
		}
	}
	return out
}

// TestCountryCodesAreBRCL14: KnownCountry accepts exactly the codes that
// BR-CL-14 of the EN 16931 validation artefacts 1.3.15 accepts in both
// UBL and CII (testdata/br-cl-14.txt, copied from the artefacts), which is
// ISO 3166-1 alpha-2 (testdata/iso-3166-1-alpha-2.txt, from Debian's
// iso-codes) plus 1A and XI, minus SS (absent from the CII list); every
// other pair of upper-case letters or digits is refused, "UK" with the
// hint to use GB.
func TestCountryCodesAreBRCL14(t *testing.T) {
	br := readCodes(t, "br-cl-14.txt")
	iso := readCodes(t, "iso-3166-1-alpha-2.txt")[""]
	ubl, cii := br["UBL"], br["CII"]
	if len(ubl) < 240 || len(cii) < 240 || len(iso) < 240 {
		t.Fatalf("lists: UBL %d, CII %d, ISO %d codes", len(ubl), len(cii), len(iso))
	}
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	accepted := 0
	for _, a := range chars {
		for _, b := range chars {
			code := string(a) + string(b)
			want := ubl[code] && cii[code]
			if got := invoicedoc.KnownCountry(code); got != want {
				t.Errorf("%s: KnownCountry %v; BR-CL-14 UBL %v, CII %v", code, got, ubl[code], cii[code])
			}
			if want {
				accepted++
				if !iso[code] && code != "1A" && code != "XI" {
					t.Errorf("%s is accepted but not ISO 3166-1", code)
				}
			} else if iso[code] && code != "SS" {
				t.Errorf("ISO 3166-1 code %s is refused", code)
			}
			if (invoicedoc.CountryProblem(code) == "") != want {
				t.Errorf("%s: CountryProblem %q", code, invoicedoc.CountryProblem(code))
			}
		}
	}
	if accepted != len(iso)-1+2 {
		t.Errorf("%d codes accepted, want ISO's %d - SS + 1A, XI", accepted, len(iso))
	}
	for code, hint := range map[string]string{"UK": `"GB"`, "XK": `"1A"`, "EL": `"GR"`, "de": `"DE"`, "SS": "CII", "XX": "BR-CL-14", "": "BR-CL-14", "DEU": "BR-CL-14"} {
		if msg := invoicedoc.CountryProblem(code); !strings.Contains(msg, hint) || !strings.Contains(msg, "ISO 3166-1") {
			t.Errorf("CountryProblem(%q) = %q; want a mention of %s", code, msg, hint)
		}
	}
}
