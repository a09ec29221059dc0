package testtool

import (
	"encoding/json"
	"testing"
)

// JSON is v as JSON, to compare values and decoded answers as text.
func JSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// SameJSON fails t unless view encodes to exactly the JSON bytes old does:
// a view type at the transport's door must write what the domain or
// adapter type it replaces wrote (docs/architecture.md, views at the door).
func SameJSON(t testing.TB, old, view any) {
	t.Helper()
	if a, b := JSON(t, old), JSON(t, view); a != b {
		t.Errorf("the view writes\n%s\nthe type it replaces wrote\n%s", b, a)
	}
}
