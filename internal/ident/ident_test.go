package ident

import "testing"

func TestNewAndIs(t *testing.T) {
	p := Prefix("farebox")
	id := p.New("coupon")
	if !p.Is(id, "coupon") {
		t.Fatalf("Is(%q) = false", id)
	}
	if p.Is(id, "ticket") || Prefix("other").Is(id, "coupon") || p.Is(id+"x", "coupon") || p.Is("farebox-coupon-", "coupon") {
		t.Error("Is accepted a wrong id")
	}
	if id[len("farebox-coupon-")+14] != '4' {
		t.Errorf("%q is not a v4 uuid", id)
	}
	if p.New("coupon") == id {
		t.Error("ids repeat")
	}
}
