package httpapi_test

import (
	"strings"
	"testing"
)

// browserPage is what the browser harness
// (internal/engines/testdata/browser/harness.js, check) records of a page.
type browserPage struct {
	Axe []struct {
		ID, Impact string
		Nodes      []string
	}
	ScrollWidth int
	Status      int
	Lang, Title string
	// Small lists the targets under 44 × 44 px of a page on the phone
	// (harness.js smallTargets).
	Small []string
}

// checkBrowserPages: each page named in want was checked, has no WCAG 2.1
// AA violation, is no wider than the 360 px phone, has on the phone no
// interactive target under 44 × 44 px, and is in German when german(name)
// and in English otherwise.
func checkBrowserPages(t *testing.T, pages map[string]browserPage, want []string, german func(name string) bool) {
	t.Helper()
	for _, name := range want {
		p, ok := pages[name]
		if !ok {
			t.Errorf("page %s not checked", name)
			continue
		}
		for _, v := range p.Axe {
			t.Errorf("%s: WCAG violation %s (%s): %v", name, v.ID, v.Impact, v.Nodes)
		}
		if limit := viewportOf(name); p.ScrollWidth > limit {
			t.Errorf("%s is %d px wide in a %d px window", name, p.ScrollWidth, limit)
		}
		if len(p.Small) > 0 {
			t.Errorf("%s: targets under 44 × 44 px on the phone: %v", name, p.Small)
		}
		wantLang := "en"
		if german(name) {
			wantLang = "de"
		}
		if p.Lang != wantLang {
			t.Errorf("%s: lang %q, want %q", name, p.Lang, wantLang)
		}
	}
}

// viewportOf is the width a page was shown at: 1280 px for a name
// with -1280 in it, else a 360 px phone.
func viewportOf(name string) int {
	if strings.Contains(name, "-1280") {
		return 1280
	}
	return 360
}

// endsDe: a page whose name ends in -de is the German one.
func endsDe(name string) bool { return strings.HasSuffix(name, "-de") }
