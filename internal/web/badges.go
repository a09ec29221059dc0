package web

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Wallet badges (docs/web.md "Wallet badges"): Apple's "Add to Apple
// Wallet" and Google's "Add to Google Wallet" badges are artwork the
// platforms license to issuers and forbid altering; farebox cannot ship
// them. The operator downloads them (Apple: developer.apple.com/wallet/
// "Add to Apple Wallet guidelines", the badge per language; Google:
// developers.google.com/wallet/generic/resources/brand-guidelines, the
// button per language) and puts them into the --wallet-badges directory as
//
//	apple-wallet-en.svg  apple-wallet-de.svg  google-wallet-en.svg  google-wallet-de.svg
//
// The traveller page then shows the official badge of the page's language
// (an image link, the platform's own wording as its text alternative) and
// otherwise keeps farebox's own button in the guidelines' shape.

// MaxBadgeBytes bounds one badge file (the official SVGs are 5–20 KB; the
// traveller page's first load stays under 100 KB).
const MaxBadgeBytes = 32 << 10

// BadgeKinds are the wallets a badge can be for, BadgeLangs the page
// languages.
var (
	BadgeKinds = []string{"apple", "google"}
	BadgeLangs = []string{"en", "de"}
)

// Badges are the loaded badge images by kind and language ("apple/de"),
// as data: URLs for an <img> (the policy allows img-src data:, and the
// page needs no request more).
type Badges map[string]template.URL

// Badge is the image of kind in lang, if the operator supplied one.
func (b Badges) Badge(kind, lang string) (template.URL, bool) {
	u, ok := b[kind+"/"+lang]
	return u, ok
}

// LoadBadges reads the badges of dir ("" for none): each of
// <kind>-wallet-<lang>.svg that exists must be an SVG document (root
// element svg, no script, at most MaxBadgeBytes); a badge missing in one
// language leaves that language with farebox's button. Files of other
// names are ignored.
func LoadBadges(dir string) (Badges, error) {
	out := Badges{}
	if dir == "" {
		return out, nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--wallet-badges %s: not a directory", dir)
	}
	for _, kind := range BadgeKinds {
		for _, lang := range BadgeLangs {
			path := filepath.Join(dir, kind+"-wallet-"+lang+".svg")
			b, err := os.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if err := CheckBadge(b); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			out[kind+"/"+lang] = template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(b))
		}
	}
	return out, nil
}

// CheckBadge accepts an SVG document: well-formed XML whose root element
// is svg, without script elements or event attributes, at most
// MaxBadgeBytes.
func CheckBadge(b []byte) error {
	if len(b) > MaxBadgeBytes {
		return fmt.Errorf("%d bytes, more than %d", len(b), MaxBadgeBytes)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("not an SVG document: %w", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = el.Name.Local
		}
		if strings.EqualFold(el.Name.Local, "script") || strings.EqualFold(el.Name.Local, "foreignObject") {
			return fmt.Errorf("contains a %s element", el.Name.Local)
		}
		for _, a := range el.Attr {
			if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
				return fmt.Errorf("contains an event attribute %s", a.Name.Local)
			}
		}
	}
	if root != "svg" {
		return fmt.Errorf("not an SVG document (root element %q)", root)
	}
	return nil
}
