package testtool

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
)

// The list checks the use-case packages share (docs/lists.md): paging
// both ways, the order of one instant and the refusals of bad parameters.

// ListCase is a bad list request and the parameter its 400 must name.
type ListCase[R any] struct {
	Req   R
	Field string
}

// CheckBadLists fails unless every case is a 400 invalid_parameter naming
// its field (and only it).
func CheckBadLists[R, T any](t *testing.T, list func(R) (kit.ListJSON[T], error), cases []ListCase[R]) {
	t.Helper()
	for _, c := range cases {
		_, err := list(c.Req)
		ae := apperr.As(err)
		if ae == nil || ae.Kind != apperr.Invalid || ae.Code != apperr.CodeInvalidParameter {
			t.Fatalf("%+v: error %v, want invalid_parameter", c.Req, err)
		}
		if len(ae.Details) != 1 || ae.Details[0].Field != c.Field {
			t.Fatalf("%+v: details %v, want %s", c.Req, ae.Details, c.Field)
		}
	}
}

// ByNewest orders ids as every list does when they were created at the
// same instant: the id descending breaks the tie.
func ByNewest(ids []string) []string {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(b, a) })
	return out
}

// WalkList pages through a list both ways: forwards with starting_after
// to the end, then back with ending_before from the last page to the
// first, and checks both give want (newest first).
func WalkList[T any](t *testing.T, name string, want []string, id func(T) string,
	list func(after, before string) kit.ListJSON[T]) {
	t.Helper()
	var pages [][]string
	after := ""
	for {
		l := list(after, "")
		var ids []string
		for _, v := range l.Data {
			ids = append(ids, id(v))
		}
		pages = append(pages, ids)
		if !l.HasMore {
			break
		}
		after = ids[len(ids)-1]
	}
	if got := slices.Concat(pages...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s forwards: %v, want %v", name, got, want)
	}
	for i := len(pages) - 1; i > 0; i-- {
		l := list("", pages[i][0])
		var ids []string
		for _, v := range l.Data {
			ids = append(ids, id(v))
		}
		if fmt.Sprint(ids) != fmt.Sprint(pages[i-1]) || l.HasMore != (i > 1) {
			t.Errorf("%s back from page %d: %v has_more %v, want %v", name, i, ids, l.HasMore, pages[i-1])
		}
	}
}

// MustList is list failing the test on an error, for a test that pages
// through a list it expects to be answered.
func MustList[R, T any](t *testing.T, list func(R) (kit.ListJSON[T], error)) func(R) kit.ListJSON[T] {
	return func(r R) kit.ListJSON[T] {
		t.Helper()
		l, err := list(r)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
}
