package invoicing

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
)

func TestSeriesAndNumber(t *testing.T) {
	// 31 Dec 23:30 UTC is already 1 January in Berlin.
	newYear := time.Date(2026, 12, 31, 23, 30, 0, 0, time.UTC)
	cases := []struct {
		env  account.Environment
		kind invoicedoc.Kind
		at   time.Time
		want string
	}{
		{account.Live, invoicedoc.KindInvoice, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), "2026-000007"},
		{account.Live, invoicedoc.KindCancellation, newYear, "2027-000007"},
		{account.Test, invoicedoc.KindInvoice, newYear, "TEST-2027-000007"},
		{account.Live, invoicedoc.KindPaymentNotice, newYear, "ZA-2027-000007"},
		{account.Test, invoicedoc.KindPaymentNotice, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), "TEST-ZA-2026-000007"},
	}
	for _, c := range cases {
		if got := Number(Series(c.env, c.kind, c.at), 7); got != c.want {
			t.Errorf("%s %s %v: %s, want %s", c.env, c.kind, c.at, got, c.want)
		}
	}
	if got := Number("2026", 1234567); got != "2026-1234567" {
		t.Errorf("wide number: %s", got)
	}
}

func TestValidateSplit(t *testing.T) {
	ok := []Share{{"a", 100}, {"b", 280}}
	if err := ValidateSplit(ok, 380); err != nil {
		t.Errorf("valid split: %v", err)
	}
	cases := []struct {
		split []Share
		code  string
		field string
	}{
		{[]Share{{"a", 100}, {"b", 281}}, "split_sum_mismatch", "/split"},
		{[]Share{{"a", 100}, {"a", 280}}, "invalid_split", "/split/1/customer_id"},
		{[]Share{{"", 380}}, "invalid_split", "/split/0/customer_id"},
		{[]Share{{"a", -20}, {"b", 400}}, "invalid_split", "/split/0/amount_in_cents"},
		{[]Share{}, "invalid_split", "/split"},
		{make([]Share, MaxSplitShares+1), "invalid_split", "/split"},
	}
	for i, c := range cases {
		err := ValidateSplit(c.split, 380)
		ae := apperr.As(err)
		if ae == nil || ae.Kind != apperr.Unprocessable || ae.Code != c.code || ae.Details[0].Field != c.field {
			t.Errorf("case %d: %v", i, err)
		}
	}
}

func TestParseCustomer(t *testing.T) {
	raw := json.RawMessage(`{"electronic_address":"04011000-12345-67","electronic_address_scheme_id":"0204","buyer_reference":"04011000-12345-67",
		"address":{"name":"Stadt","street_with_number":"Platz 1","postal_code":"01067","city":"Dresden","country_code":"DE","addition_address_line_two":"Raum 2"}}`)
	lines, e, err := ParseCustomer(CustomerInput{AddressLines: []string{"Stadt", "Platz 1"}, Electronic: raw}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || e.ElectronicAddressSchemeID != "0204" || e.Address.PostalCode != "01067" ||
		e.Address.AdditionAddressLineOne != nil || *e.Address.AdditionAddressLineTwo != "Raum 2" {
		t.Errorf("parsed: %v %+v", lines, e)
	}
	b := Customer{AddressLines: lines, Electronic: e}.Buyer()
	if b.Electronic.Scheme != "0204" || b.Electronic.Address.Street != "Platz 1" || b.Electronic.Address.AdditionalLine2 != "Raum 2" || b.Name() != "Stadt" {
		t.Errorf("buyer: %+v", b.Electronic)
	}
	// An accepted customer always makes a valid invoice document.
	d := invoicedoc.Document{Kind: invoicedoc.KindInvoice, Number: "1", IssueDate: time.Now(), Buyer: b,
		Lines: []invoicedoc.Line{{BillableItemID: "x", Name: "Ticket", Quantity: 1, Gross: 380, RateBP: 700, OrderedAt: time.Now()}}}
	if err := d.Validate(); err != nil {
		for _, fe := range apperr.As(err).Details {
			if strings.HasPrefix(fe.Field, "/buyer") {
				t.Errorf("accepted customer fails the document rules: %v", fe)
			}
		}
	}
	// Every missing field is reported at once.
	_, _, err = ParseCustomer(CustomerInput{AddressLines: []string{"A"}, Electronic: json.RawMessage(`{"address":{}}`)}, true)
	ae := apperr.As(err)
	if ae == nil || len(ae.Details) != 8 {
		t.Errorf("all missing fields: %v", err)
	}
}

// FuzzParseCustomer: arbitrary electronic_invoicing JSON never panics;
// an accepted value has every required field non-blank and a document made
// from it passes the buyer rules of internal/invoicedoc.
func FuzzParseCustomer(f *testing.F) {
	f.Add(`{"electronic_address":"a@b.de","electronic_address_scheme_id":"EM","buyer_reference":"R","address":{"name":"N","street_with_number":"S 1","postal_code":"01234","city":"C","country_code":"DE"}}`, "Name")
	f.Add(`null`, "x")
	f.Add(`{}`, "")
	f.Add(`{"address":[]}`, "ä")
	f.Add(`{"electronic_address":"  ","electronic_address_scheme_id":7}`, strings.Repeat("y", 36))
	f.Fuzz(func(t *testing.T, raw, line string) {
		lines, e, err := ParseCustomer(CustomerInput{AddressLines: []string{line}, Electronic: json.RawMessage(raw)}, true)
		if err != nil {
			if ae := apperr.As(err); ae == nil || ae.Kind != apperr.Unprocessable || len(ae.Details) == 0 {
				t.Fatalf("error is not a 422 with details: %v", err)
			}
			return
		}
		if e == nil {
			t.Fatal("accepted without electronic_invoicing although it was sent")
		}
		b := Customer{AddressLines: lines, Electronic: e}.Buyer()
		d := invoicedoc.Document{Kind: invoicedoc.KindInvoice, Number: "1", IssueDate: time.Now(), Buyer: b,
			Lines: []invoicedoc.Line{{BillableItemID: "x", Name: "Ticket", Quantity: 1, Gross: 380, RateBP: 700, OrderedAt: time.Now()}}}
		if err := d.Validate(); err != nil {
			for _, fe := range apperr.As(err).Details {
				if strings.HasPrefix(fe.Field, "/buyer") {
					t.Fatalf("accepted customer fails %s: %s", fe.Field, fe.Message)
				}
			}
		}
	})
}
