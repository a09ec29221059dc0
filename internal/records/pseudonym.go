package records

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// MinKeyBytes is the shortest pseudonym key accepted (256 bits).
const MinKeyBytes = 32

// Pseudonymizer makes the traveller's pseudonym of the issuance records:
// HMAC-SHA256 under the seller's key over the normalised identity
// (Identity). The same traveller gets the same pseudonym on every ticket;
// without the key nobody can test a guessed name against it.
type Pseudonymizer struct {
	key []byte
	// KeyID names the key in the export (not the key: a hash of it under
	// its own label), so the recipient sees when the seller changed it.
	KeyID string
}

// NewPseudonymizer returns the pseudonymizer of key (at least MinKeyBytes).
func NewPseudonymizer(key []byte) (*Pseudonymizer, error) {
	if len(key) < MinKeyBytes {
		return nil, errors.New("records: the pseudonym key must hold at least 32 bytes")
	}
	id := sha256.Sum256(append([]byte("farebox pseudonym key id\x00"), key...))
	return &Pseudonymizer{key: append([]byte(nil), key...), KeyID: hex.EncodeToString(id[:8])}, nil
}

// Of returns the pseudonym of a stored identification medium: "p1:" and
// the hex HMAC of Identity(medium); "" when the medium names nobody (it
// was erased, or holds no name).
func (p *Pseudonymizer) Of(medium []byte) string {
	id, ok := Identity(medium)
	if !ok {
		return ""
	}
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte(id))
	return "p1:" + hex.EncodeToString(m.Sum(nil))
}

// fold is Unicode full case folding (ß and ss, Σ and σ/ς fold alike).
var fold = cases.Fold()

// Identity is the normalised identity of a traveller that the pseudonym
// hashes (docs/records.md "The traveller's pseudonym"): the first name,
// last name and birth date of the medium's one entry (photo_id_lite,
// photo_id_name_only, or any other kind with these fields), each in
// Unicode NFKC, case-folded, with every run of white space and control
// characters made one space and trimmed; the birth date as stored (YYYY-MM-DD, "" when the medium has
// none). They are joined with U+001F under the version "v1". ok is false
// when there is no name to hash.
func Identity(medium []byte) (string, bool) {
	var m map[string]struct {
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
		BirthDate string `json:"birth_date"`
	}
	if json.Unmarshal(medium, &m) != nil || len(m) != 1 {
		return "", false
	}
	for _, v := range m {
		first, last := normaliseName(v.FirstName), normaliseName(v.LastName)
		if first == "" && last == "" {
			return "", false
		}
		return "v1\x1f" + first + "\x1f" + last + "\x1f" + strings.TrimSpace(v.BirthDate), true
	}
	return "", false
}

func normaliseName(s string) string {
	s = norm.NFKC.String(fold.String(norm.NFKC.String(s)))
	// Control characters (the separator U+001F among them) count as space.
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}
