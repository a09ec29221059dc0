package event

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCatalogueIsDocumented: the types of the catalogue are exactly the
// Event.type enum of api/openapi.yaml and the rows of the catalogue table
// in docs/events.md, so a new type cannot be born undocumented.
func TestCatalogueIsDocumented(t *testing.T) {
	want := make([]string, len(Types))
	for i, ty := range Types {
		want[i] = string(ty)
	}
	slices.Sort(want)

	spec, err := os.ReadFile("../../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)\n    EventType:\n.*?enum: \[(.*?)\]`).FindSubmatch(spec)
	if m == nil {
		t.Fatal("api/openapi.yaml has no EventType enum")
	}
	var enum []string
	for _, f := range strings.Split(string(m[1]), ",") {
		enum = append(enum, strings.TrimSpace(f))
	}
	slices.Sort(enum)
	if !slices.Equal(enum, want) {
		t.Errorf("OpenAPI EventType enum %v, catalogue %v", enum, want)
	}

	doc, err := os.ReadFile("../../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n## The catalogue\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []string
	for _, r := range regexp.MustCompile("(?m)^\\| `([a-z_]+\\.[a-z_]+)` \\|").FindAllStringSubmatch(section, -1) {
		rows = append(rows, string(r[1]))
	}
	slices.Sort(rows)
	if !slices.Equal(rows, want) {
		t.Errorf("docs/events.md catalogue rows %v, catalogue %v", rows, want)
	}
	for _, ty := range Types {
		if !Known(ty) {
			t.Errorf("%s not known", ty)
		}
	}
	if Known("order.deleted") || Known("") {
		t.Error("unknown types are known")
	}
}
