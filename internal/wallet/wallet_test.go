package wallet

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
)

func view() TicketView {
	return TicketView{
		TicketID: "farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f", ProductName: "Einzelfahrt",
		ValidFrom: time.Date(2026, 11, 1, 8, 0, 0, 0, time.FixedZone("CET", 3600)), ValidUntil: time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC),
		Environment: "live", Barcode: []byte("FB\x01"),
	}
}

func TestNewPassValidates(t *testing.T) {
	p, err := NewPass(view())
	if err != nil {
		t.Fatal(err)
	}
	if p.ValidFrom.Location() != time.UTC || !p.ValidFrom.Equal(time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC)) {
		t.Errorf("valid_from not normalised to UTC: %v", p.ValidFrom)
	}
	if p.ShortRef() != "T-4D5E6F" || p.Test() {
		t.Errorf("ShortRef %q Test %v", p.ShortRef(), p.Test())
	}
	for field, mod := range map[string]func(*TicketView){
		"/ticket_id":    func(v *TicketView) { v.TicketID = "" },
		"/product_name": func(v *TicketView) { v.ProductName = "" },
		"/valid_until":  func(v *TicketView) { v.ValidUntil = v.ValidFrom.Add(-time.Minute) },
		"/environment":  func(v *TicketView) { v.Environment = "staging" },
		"/barcode":      func(v *TicketView) { v.Barcode = nil },
	} {
		v := view()
		mod(&v)
		_, err := NewPass(v)
		ae := apperr.As(err)
		if ae == nil || ae.Kind != apperr.Unprocessable || len(ae.Details) != 1 || ae.Details[0].Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
}

func TestArea(t *testing.T) {
	for _, c := range []struct{ zone, city, want string }{
		{"Tarifzone A", "Berlin", "Tarifzone A (Berlin)"}, {"Berlin", "Berlin", "Berlin"}, {"", "Köln", "Köln"}, {"", "", ""},
	} {
		v := view()
		v.ZoneName, v.CityName = c.zone, c.city
		p, _ := NewPass(v)
		if got := p.Area(); got != c.want {
			t.Errorf("Area(%q,%q) = %q", c.zone, c.city, got)
		}
	}
}

func TestPassengerFromIdentificationMedium(t *testing.T) {
	for in, want := range map[string]Passenger{
		`{"photo_id_lite":{"first_name":"Max","last_name":"Mustermann","birth_date":"1990-01-01"}}`: {"Max", "Mustermann", "1990-01-01"},
		`{"photo_id_name_only":{"first_name":"Erika","last_name":"Musterfrau"}}`:                    {"Erika", "Musterfrau", ""},
		`{"custom_card":{"first_name":"Ana","card_number":"123"}}`:                                  {FirstName: "Ana"},
		`{"photo_id":{"first_name":7}}`:                                                             {},
		`null`:                                                                                      {},
		`[1]`:                                                                                       {},
	} {
		if got := PassengerFromIdentificationMedium(json.RawMessage(in)); got != want {
			t.Errorf("%s: %+v", in, got)
		}
	}
	if n := (Passenger{FirstName: "Max"}).Name(); n != "Max" {
		t.Errorf("Name %q", n)
	}
}

func TestRenderingOptions(t *testing.T) {
	for _, c := range []struct {
		a    Availability
		want []string
	}{
		{Availability{}, []string{}},
		{Availability{Apple: true}, []string{"apple_wallet"}},
		{Availability{Google: true}, []string{"google_wallet"}},
		{Availability{Apple: true, Google: true}, []string{"apple_wallet", "google_wallet"}},
	} {
		got := RenderingOptions(view(), c.a)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%+v: %s", c.a, diff)
		}
		if b, _ := json.Marshal(got); b[0] != '[' {
			t.Errorf("not a JSON array: %s", b)
		}
	}
	noBarcode := view()
	noBarcode.Barcode = nil
	if got := RenderingOptions(noBarcode, Availability{Apple: true, Google: true}); len(got) != 0 || got == nil {
		t.Errorf("ticket without barcode: %#v", got)
	}
}

func TestClaimsSignAndVerify(t *testing.T) {
	v := view()
	v.ProductID = "farebox-product-0a1b2c3d-4e5f-4a6b-9c8d-7e6f5a4b3c2d"
	v.Passenger = Passenger{FirstName: "Max", LastName: "Mustermann", BirthDate: "1990-01-01"}
	v.ValidUntil = v.ValidUntil.Add(500 * time.Millisecond)
	k, _ := barcode.KeyFromSeed(2, make([]byte, 32))
	kr, _ := barcode.NewKeyring(k)
	p, _, err := barcode.SignWith(v.Claims(), kr, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := barcode.Verify(p, kr)
	if err != nil {
		t.Fatal(err)
	}
	want := barcode.Claims{Version: 1, KeyID: 2, TicketID: v.TicketID, ProductID: v.ProductID, ProductName: "Einzelfahrt",
		ValidFrom: time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC), ValidUntil: time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC),
		FirstName: "Max", LastName: "Mustermann", BirthDate: "1990-01-01", Environment: "live"}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
}
