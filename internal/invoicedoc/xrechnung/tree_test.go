package xrechnung

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/money"
)

// node is a parsed element, addressed by local names in tests.
type node struct {
	name     string
	attrs    map[string]string
	text     string
	children []*node
}

func parse(t testing.TB, doc []byte) *node {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	root := &node{}
	stack := []*node{root}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			n := &node{name: x.Name.Local, attrs: map[string]string{}}
			for _, a := range x.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			top := stack[len(stack)-1]
			top.children = append(top.children, n)
			stack = append(stack, n)
		case xml.CharData:
			stack[len(stack)-1].text += string(x)
		case xml.EndElement:
			n := stack[len(stack)-1]
			n.text = strings.TrimSpace(n.text)
			stack = stack[:len(stack)-1]
		}
	}
	if len(root.children) != 1 {
		t.Fatalf("want one root element, got %d", len(root.children))
	}
	return root.children[0]
}

// all returns the elements at a slash-separated path of local names below n.
func (n *node) all(path string) []*node {
	cur := []*node{n}
	for _, part := range strings.Split(path, "/") {
		var next []*node
		for _, c := range cur {
			for _, ch := range c.children {
				if ch.name == part {
					next = append(next, ch)
				}
			}
		}
		cur = next
	}
	return cur
}

// one returns the single element at path or fails.
func (n *node) one(t testing.TB, path string) *node {
	t.Helper()
	got := n.all(path)
	if len(got) != 1 {
		t.Fatalf("%s/%s: want 1 element, got %d", n.name, path, len(got))
	}
	return got[0]
}

// val is the text of the single element at path.
func (n *node) val(t testing.TB, path string) string { t.Helper(); return n.one(t, path).text }

// walk visits every element.
func (n *node) walk(f func(*node)) {
	f(n)
	for _, c := range n.children {
		c.walk(f)
	}
}

// cents parses an XML amount with at most two decimals (BR-DEC-*).
func cents(t testing.TB, s string) money.Cents {
	t.Helper()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 2 || whole == "" {
		t.Fatalf("amount %q has more than two decimals or no integer part", s)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	var v int64
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			t.Fatalf("amount %q is not decimal", s)
		}
		v = v*10 + int64(r-'0')
	}
	if neg {
		v = -v
	}
	return money.Cents(v)
}
