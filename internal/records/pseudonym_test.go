package records

import (
	"bytes"
	"strings"
	"testing"
)

func TestIdentityNormalisation(t *testing.T) {
	same := [][]string{
		{`{"photo_id_lite":{"first_name":"Max","last_name":"Müller","birth_date":"1990-01-01"}}`,
			`{"photo_id_lite":{"first_name":"  MAX ","last_name":"MÜLLER","birth_date":"1990-01-01"}}`,
			`{"photo_id_lite":{"first_name":"Max","last_name":"Mu\u0308ller","birth_date":"1990-01-01"}}`, // decomposed ü
			`{"photo_id_lite":{"last_name":"Müller","birth_date":"1990-01-01","first_name":"max"}}`},
		{`{"photo_id_lite":{"first_name":"Anna  Lena","last_name":"Groß","birth_date":"2001-12-31"}}`,
			`{"photo_id_lite":{"first_name":"anna\tlena","last_name":"GROSS","birth_date":"2001-12-31"}}`}, // ß folds to ss
		{`{"photo_id_name_only":{"first_name":"Ｊａｎ","last_name":"Ωmega"}}`, // full-width letters (NFKC)
			`{"photo_id_name_only":{"first_name":"jan","last_name":"ωMEGA"}}`},
	}
	p, err := NewPseudonymizer(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	var groups []string
	for _, g := range same {
		first := p.Of([]byte(g[0]))
		if !strings.HasPrefix(first, "p1:") || len(first) != 3+64 {
			t.Fatalf("pseudonym %q", first)
		}
		for _, m := range g[1:] {
			if got := p.Of([]byte(m)); got != first {
				a, _ := Identity([]byte(g[0]))
				b, _ := Identity([]byte(m))
				t.Errorf("%s and %s differ: %q / %q", g[0], m, a, b)
			}
		}
		groups = append(groups, first)
	}
	apart := []string{`{"photo_id_lite":{"first_name":"Max","last_name":"Müller","birth_date":"1990-01-02"}}`,
		`{"photo_id_name_only":{"first_name":"Max","last_name":"Müller"}}`,
		`{"photo_id_lite":{"first_name":"Max","last_name":"Mueller","birth_date":"1990-01-01"}}`,
		`{"photo_id_lite":{"first_name":"MaxMüller","last_name":"","birth_date":"1990-01-01"}}`}
	for _, m := range apart {
		if got := p.Of([]byte(m)); got == groups[0] || got == "" {
			t.Errorf("%s got %q, the pseudonym of another traveller (or none)", m, got)
		}
	}
	for _, none := range []string{`{}`, `null`, `{"photo_id_lite":{}}`, `{"a":{"first_name":"x"},"b":{"first_name":"y"}}`, `"erased"`} {
		if got := p.Of([]byte(none)); got != "" {
			t.Errorf("%s: %q, want no pseudonym", none, got)
		}
	}
	q, _ := NewPseudonymizer(bytes.Repeat([]byte{2}, 32))
	if q.Of([]byte(same[0][0])) == groups[0] || q.KeyID == p.KeyID {
		t.Error("another key gives the same pseudonym or key id")
	}
	if _, err := NewPseudonymizer(make([]byte, 31)); err == nil {
		t.Error("a 31-byte key was accepted")
	}
}

func FuzzIdentity(f *testing.F) {
	f.Add([]byte(`{"photo_id_lite":{"first_name":"Max","last_name":"Müller","birth_date":"1990-01-01"}}`))
	f.Add([]byte(`{"x":{"first_name":"\u0000 \u00a0","last_name":"ﬁ"}}`))
	p, _ := NewPseudonymizer(bytes.Repeat([]byte{3}, 32))
	f.Fuzz(func(t *testing.T, medium []byte) {
		id, ok := Identity(medium)
		if ok != (p.Of(medium) != "") || (ok && !strings.HasPrefix(id, "v1\x1f")) {
			t.Fatalf("%q: identity %q %v, pseudonym %q", medium, id, ok, p.Of(medium))
		}
		if ok { // normalising is idempotent: the identity's parts are fixed points
			parts := strings.Split(id, "\x1f")
			for _, part := range parts[1:3] {
				if normaliseName(part) != part {
					t.Fatalf("%q normalises again to %q", part, normaliseName(part))
				}
			}
		}
	})
}
