package uba

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The Unicode conformance files for UAX #9, from Debian's unicode-data
// package (scripts/apt-packages.txt). Their version (15.0) is the one of
// golang.org/x/text's tables below Go 1.27 (tables15.0.0.go).
const (
	bidiCharacterTest = "/usr/share/unicode/BidiCharacterTest.txt"
	bidiTest          = "/usr/share/unicode/BidiTest.txt"
)

func openConformance(t *testing.T, path string) *bufio.Scanner {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (install Debian's unicode-data)", err)
	}
	t.Cleanup(func() { f.Close() })
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return sc
}

// sameLevels compares got with the expected levels of a conformance line
// ("x": removed by X9, any level).
func sameLevels(got []int, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i, w := range want {
		if w != "x" && w != strconv.Itoa(got[i]) {
			return false
		}
	}
	return true
}

// TestBidiCharacterTest runs every case of BidiCharacterTest.txt: those
// whose paragraph direction is auto (2) through Levels (P2, P3), the
// others (0 LTR, 1 RTL) with that paragraph level; it checks the levels
// and the visual order Reorder gives them (L2).
func TestBidiCharacterTest(t *testing.T) {
	sc := openConformance(t, bidiCharacterTest)
	pass, fail, auto := 0, 0, 0
	for line := 0; sc.Scan(); {
		line++
		text := sc.Text()
		if text == "" || text[0] == '#' {
			continue
		}
		f := strings.Split(text, ";")
		if len(f) != 5 {
			t.Fatalf("line %d: %d fields", line, len(f))
		}
		var runes []rune
		for _, h := range strings.Fields(f[0]) {
			v, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			runes = append(runes, rune(v))
		}
		var got []int
		var err error
		switch f[1] {
		case "2":
			auto++
			got, err = Levels(runes)
		case "0", "1":
			got = levels(runes, int(f[1][0]-'0'))
		default:
			t.Fatalf("line %d: direction %q", line, f[1])
		}
		want := strings.Fields(f[3])
		if err != nil || !sameLevels(got, want) {
			fail++
			if fail <= 20 {
				t.Errorf("line %d: %s: got %v, %v; want %s", line, f[0], got, err, f[3])
			}
			continue
		}
		if order := visualOrder(got, want); order != f[4] {
			fail++
			if fail <= 20 {
				t.Errorf("line %d: %s: order %q, want %q", line, f[0], order, f[4])
			}
			continue
		}
		pass++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("BidiCharacterTest.txt: %d cases pass (%d of them auto direction), %d fail", pass, auto, fail)
	if pass == 0 || auto == 0 {
		t.Errorf("no case run")
	}
}

// visualOrder is Reorder of the runes X9 keeps (want not "x"), written as
// field 4 of BidiCharacterTest.txt: their indexes in visual order.
func visualOrder(levels []int, want []string) string {
	var kept, idx []int
	for i, w := range want {
		if w != "x" {
			kept = append(kept, levels[i])
			idx = append(idx, i)
		}
	}
	var b strings.Builder
	for n, k := range Reorder(kept) {
		if n > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(idx[k]))
	}
	return b.String()
}

// classRune is a character of each bidi class, to turn the class
// sequences of BidiTest.txt into text.
var classRune = map[string]rune{
	"L": 'a', "R": 'א', "AL": 'ا', "EN": '1', "ES": '+', "ET": '$',
	"AN": '٠', "CS": ',', "NSM": '\u0300', "BN": '\u00ad', "B": '\u2029',
	"S": '\t', "WS": ' ', "ON": '!', "LRE": '\u202a', "RLE": '\u202b',
	"PDF": '\u202c', "LRO": '\u202d', "RLO": '\u202e', "LRI": '\u2066',
	"RLI": '\u2067', "FSI": '\u2068', "PDI": '\u2069',
}

// TestBidiTest runs every case of BidiTest.txt, once per paragraph
// direction of its bitset (1 auto through Levels, 2 LTR, 4 RTL).
//
// A paragraph separator (class B) appears there only as the last
// character. Levels takes one line without one (splitting paragraphs, P1,
// is the caller's) and treats B as white space, which is not the same: an
// embedding opened before B would raise that white space's explicit level
// and so the eos of the text before it ("R ES RLE B"), where X8 ends every
// embedding at B. So a case ending in B is resolved without its B, and the
// B itself is expected at the paragraph level (X8, L1); BidiTest's own
// levels tell whether that holds.
func TestBidiTest(t *testing.T) {
	sc := openConformance(t, bidiTest)
	var want []string
	pass, fail, cases, endB := 0, 0, 0, 0
	for line := 0; sc.Scan(); {
		line++
		text := sc.Text()
		switch {
		case text == "" || text[0] == '#':
			continue
		case strings.HasPrefix(text, "@Levels:"):
			want = strings.Fields(strings.TrimPrefix(text, "@Levels:"))
			continue
		case text[0] == '@':
			continue
		}
		classes, bits, ok := strings.Cut(text, ";")
		set, err := strconv.Atoi(strings.TrimSpace(bits))
		if !ok || err != nil {
			t.Fatalf("line %d: %q", line, text)
		}
		var runes []rune
		for _, c := range strings.Fields(classes) {
			r, ok := classRune[c]
			if !ok {
				t.Fatalf("line %d: class %q", line, c)
			}
			runes = append(runes, r)
		}
		cases++
		body := runes
		sep := len(runes) > 0 && runes[len(runes)-1] == classRune["B"]
		if sep {
			endB++
			body = runes[:len(runes)-1]
		}
		for i, r := range body {
			if r == classRune["B"] {
				t.Fatalf("line %d: B at %d, not last", line, i)
			}
		}
		for _, dir := range []struct{ bit, para int }{{1, -1}, {2, 0}, {4, 1}} {
			if set&dir.bit == 0 {
				continue
			}
			var got []int
			var err error
			if dir.para < 0 {
				got, err = Levels(body)
			} else {
				got = levels(body, dir.para)
			}
			if sep {
				// The paragraph level: L1 sets the trailing white space
				// Levels makes of B to it.
				var whole []int
				if dir.para < 0 {
					whole, _ = Levels(runes)
				} else {
					whole = levels(runes, dir.para)
				}
				got = append(got, whole[len(whole)-1])
			}
			if err != nil || !sameLevels(got, want) {
				fail++
				if fail <= 20 {
					t.Errorf("line %d: %s (bit %d): got %v, %v; want %v", line, classes, dir.bit, got, err, want)
				}
				continue
			}
			pass++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("BidiTest.txt: %d lines (%d ending in B), %d line×direction cases pass, %d fail", cases, endB, pass, fail)
	if pass == 0 {
		t.Errorf("no case run")
	}
}
