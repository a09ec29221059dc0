package clearing

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed postalcodes.tsv
var postalTSV string

// NotGermany is the tariff setting of a residence outside Germany.
const NotGermany = "not-germany"

// PostalField is the tariff setting that carries the postal code.
const PostalField = "german_postal_code"

const undecided = 0xff

var (
	byCode [100000]uint8 // 0: not in the table; 1…16: States[i-1]; undecided
	notes  = map[string]string{}
)

func init() {
	index := map[State]uint8{}
	for i, s := range States {
		index[s] = uint8(i + 1)
	}
	for _, line := range strings.Split(postalTSV, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.SplitN(line, "\t", 3)
		n := digits(f[0])
		if n < 0 || len(f) != 3 {
			panic("clearing: bad line in postalcodes.tsv: " + line)
		}
		if f[1] == "" {
			byCode[n] = undecided
		} else if byCode[n] = index[State(f[1])]; byCode[n] == 0 {
			panic("clearing: unknown state in postalcodes.tsv: " + line)
		}
		if f[2] != "" {
			notes[f[0]] = f[2]
		}
	}
}

// digits is the value of a five-digit code, or -1.
func digits(s string) int {
	if len(s) != 5 {
		return -1
	}
	n := 0
	for i := 0; i < 5; i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// ParsePostalCode checks a postal code as the tariff setting holds it:
// five digits or "not-germany".
func ParsePostalCode(s string) (string, error) {
	if s == NotGermany || digits(s) >= 0 {
		return s, nil
	}
	return "", fmt.Errorf("postal code %q: want five digits or %q", clip(s), NotGermany)
}

func clip(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// PostalCodeOf is the postal code in stored tariff settings ("" when
// there are none, they were erased or hold no valid code).
func PostalCodeOf(tariffSettings []byte) string {
	if len(tariffSettings) == 0 {
		return ""
	}
	var ts map[string]json.RawMessage
	if json.Unmarshal(tariffSettings, &ts) != nil {
		return ""
	}
	var code string
	if json.Unmarshal(ts[PostalField], &code) != nil {
		return ""
	}
	if c, err := ParsePostalCode(code); err == nil {
		return c
	}
	return ""
}

// StateOf is the row a postal code is reported in, and for Unmapped why:
// not-germany is Abroad; a code of one state is that state; a code whose
// places lie in several states is the state of most of them (the note
// says so); a tie, a code without a state in the source, a code the
// table does not know and a missing code are Unmapped.
func StateOf(code string) (State, string) {
	if code == NotGermany {
		return Abroad, ""
	}
	if code == "" {
		return Unmapped, "no postal code"
	}
	n := digits(code)
	if n < 0 {
		return Unmapped, "not a postal code"
	}
	switch v := byCode[n]; v {
	case 0:
		return Unmapped, "not in the postal code table"
	case undecided:
		return Unmapped, notes[code]
	default:
		return States[v-1], ""
	}
}

// TableCode is a code of the table with its note.
type TableCode struct {
	Code  string
	State State // "" when the table gives none
	Note  string
}

// TableNotes lists every code of the table that is not simply one
// state's: the codes it cannot map (State "") and those in several
// states mapped to the state of most of their places, in code order.
func TableNotes() []TableCode {
	var out []TableCode
	for n := 0; n < len(byCode); n++ {
		code := fmt.Sprintf("%05d", n)
		note, ok := notes[code]
		if !ok {
			continue
		}
		tc := TableCode{Code: code, Note: note}
		if v := byCode[n]; v != undecided {
			tc.State = States[v-1]
		}
		out = append(out, tc)
	}
	return out
}

// TableSize is the number of postal codes the table knows.
func TableSize() int {
	k := 0
	for _, v := range byCode {
		if v != 0 {
			k++
		}
	}
	return k
}
