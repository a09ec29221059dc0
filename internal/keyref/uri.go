package keyref

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
)

// Scheme starts a token reference.
const Scheme = "pkcs11:"

// IsToken reports whether ref names a token object rather than a file.
func IsToken(ref string) bool { return strings.HasPrefix(strings.ToLower(ref), Scheme) }

// URI is a parsed `pkcs11:` URI (RFC 7512) as farebox uses it: the token
// by label (token) or serial number (serial), the key by label (object)
// and/or CKA_ID (id), the user PIN (pin-value, or pin-source: a file
// holding it) and the module (module-path).
type URI struct {
	Token, Serial string
	Object        string
	ID            []byte
	PIN           string
	PINSource     string
	ModulePath    string
}

// known path and query attributes; any other attribute (but a vendor's
// "x-" one) is refused, so a misspelt "objet=" never selects the wrong key.
var (
	pathAttrs  = map[string]bool{"token": true, "serial": true, "object": true, "id": true, "type": true, "manufacturer": true, "model": true, "slot-id": true, "slot-description": true, "slot-manufacturer": true, "library-description": true, "library-manufacturer": true, "library-version": true}
	queryAttrs = map[string]bool{"pin-value": true, "pin-source": true, "module-path": true, "module-name": true}
)

// ParseURI parses s. It needs a token (token or serial), a key (object or
// id) and module-path.
func ParseURI(s string) (URI, error) { return parseURI(s, true) }

// ParseTokenURI parses a URI of a whole token (OpenDir): object and id
// are not needed.
func ParseTokenURI(s string) (URI, error) { return parseURI(s, false) }

func parseURI(s string, needKey bool) (URI, error) {
	if !IsToken(s) {
		return URI{}, errors.New("not a pkcs11: URI")
	}
	body := s[len(Scheme):]
	path, query, _ := strings.Cut(body, "?")
	var u URI
	seen := map[string]bool{}
	set := func(part, sep string, known map[string]bool) error {
		for _, a := range strings.Split(part, sep) {
			if a == "" {
				continue
			}
			k, v, ok := strings.Cut(a, "=")
			if !ok {
				return fmt.Errorf("attribute %q has no value", a)
			}
			k = strings.ToLower(k)
			if !known[k] && !strings.HasPrefix(k, "x-") {
				return fmt.Errorf("unknown attribute %q", k)
			}
			if seen[k] {
				return fmt.Errorf("attribute %q given twice", k)
			}
			seen[k] = true
			dv, err := url.PathUnescape(v)
			if err != nil {
				return fmt.Errorf("attribute %q: %w", k, err)
			}
			switch k {
			case "token":
				u.Token = dv
			case "serial":
				u.Serial = dv
			case "object":
				u.Object = dv
			case "id":
				u.ID = []byte(dv)
			case "type":
				if dv != "private" {
					return fmt.Errorf("type=%s: a signing key is type=private", dv)
				}
			case "pin-value":
				u.PIN = dv
			case "pin-source":
				u.PINSource = strings.TrimPrefix(dv, "file:")
			case "module-path":
				u.ModulePath = dv
			case "module-name":
				return errors.New("module-name is not supported: give module-path")
			}
		}
		return nil
	}
	if err := set(path, ";", pathAttrs); err != nil {
		return URI{}, err
	}
	if err := set(query, "&", queryAttrs); err != nil {
		return URI{}, err
	}
	switch {
	case u.Token == "" && u.Serial == "":
		return URI{}, errors.New("no token: give token=LABEL (or serial=)")
	case needKey && u.Object == "" && len(u.ID) == 0:
		return URI{}, errors.New("no key: give object=LABEL and/or id=")
	case u.ModulePath == "":
		return URI{}, errors.New("no module: give ?module-path=/path/to/the/pkcs11-module.so")
	case u.PIN != "" && u.PINSource != "":
		return URI{}, errors.New("give pin-value or pin-source, not both")
	}
	return u, nil
}

// userPIN is the PIN to log in with: pin-value, the first line of the
// pin-source file, or "" (no login).
func (u URI) userPIN() (string, error) {
	if u.PINSource == "" {
		return u.PIN, nil
	}
	b, err := os.ReadFile(u.PINSource)
	if err != nil {
		return "", fmt.Errorf("pin-source: %w", err)
	}
	pin, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimRight(pin, "\r"), nil
}

// String is the URI without its PIN (for logs and errors): pin-value is
// replaced by "***", every other attribute kept.
func (u URI) String() string {
	var path []string
	add := func(k, v string) {
		if v != "" {
			path = append(path, k+"="+escape(v))
		}
	}
	add("token", u.Token)
	add("serial", u.Serial)
	add("object", u.Object)
	add("id", string(u.ID))
	q := map[string]string{"module-path": u.ModulePath, "pin-source": u.PINSource}
	if u.PIN != "" {
		q["pin-value"] = "***"
	}
	var query []string
	for k, v := range q {
		if v != "" {
			query = append(query, k+"="+escape(v))
		}
	}
	sort.Strings(query)
	s := Scheme + strings.Join(path, ";")
	if len(query) > 0 {
		s += "?" + strings.Join(query, "&")
	}
	return s
}

// escape percent-encodes what RFC 7512 does not allow unencoded in an
// attribute value.
func escape(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~:[]@!$'()*+,/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
