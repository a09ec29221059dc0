package invoicedoc

import (
	"fmt"
	"strings"
)

// countryCodes is what BR-CL-14 of the EN 16931 validation artefacts
// 1.3.15 accepts as a country code in both syntaxes farebox writes (UBL
// and CII): the ISO 3166-1 alpha-2 codes plus 1A (Kosovo) and XI
// (Northern Ireland). South Sudan's SS is missing from the CII list of
// that release (which still has the withdrawn AN), so an address with SS
// would make the CII file fatally invalid: it is refused until the
// artefacts list it. TestCountryCodesAreBRCL14 compares this list with
// the artefacts' two lists and with ISO 3166-1 (testdata).
var countryCodes = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`1A AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI
		BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK
		DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY
		HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI
		LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG
		NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH
		SI SJ SK SL SM SN SO SR ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ
		VA VC VE VG VI VN VU WF WS XI YE YT ZA ZM ZW`) {
		countryCodes[c] = true
	}
}

// KnownCountry reports whether code is a country code both XRechnung
// syntaxes accept (BR-CL-14).
func KnownCountry(code string) bool { return countryCodes[code] }

// countryHints are the codes partners write for a country whose ISO code
// is another one.
var countryHints = map[string]string{
	"UK": `use "GB" for the United Kingdom`,
	"EL": `use "GR" for Greece (EL is its VAT prefix only)`,
	"XK": `use "1A" for Kosovo`,
	"EN": `use "GB" for England (the United Kingdom)`,
	"SS": `South Sudan is missing from the CII list of the EN 16931 validation artefacts 1.3.15, so its CII file would be invalid`,
}

// CountryProblem says why code is not a country code for an invoice
// address, with a hint where one helps; "" when it is one.
func CountryProblem(code string) string {
	if KnownCountry(code) {
		return ""
	}
	msg := fmt.Sprintf("%q is not an ISO 3166-1 alpha-2 country code accepted by XRechnung (BR-CL-14)", code)
	if h, ok := countryHints[strings.ToUpper(code)]; ok {
		msg += "; " + h
	} else if up := strings.ToUpper(code); up != code && KnownCountry(up) {
		msg += fmt.Sprintf("; use %q (upper case)", up)
	}
	return msg
}
