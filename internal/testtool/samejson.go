package testtool

import (
	"encoding/json"
	"testing"
)

// SameJSON fails t unless view encodes to exactly the JSON bytes old does:
// a view type at the transport's door must write what the domain or
// adapter type it replaces wrote (docs/architecture.md, views at the door).
func SameJSON(t testing.TB, old, view any) {
	t.Helper()
	a, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(view)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("the view writes\n%s\nthe type it replaces wrote\n%s", b, a)
	}
}
