package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/testtool"
)

// CustomerJSON is the customer response as a partner decodes it.
type CustomerJSON struct {
	ID                  string   `json:"id"`
	Environment         string   `json:"environment"`
	AddressLines        []string `json:"address_lines"`
	ElectronicInvoicing *struct {
		ElectronicAddress string `json:"electronic_address"`
		SchemeID          string `json:"electronic_address_scheme_id"`
		BuyerReference    string `json:"buyer_reference"`
		Address           struct {
			Name             string  `json:"name"`
			StreetWithNumber string  `json:"street_with_number"`
			AdditionLineOne  *string `json:"addition_address_line_one"`
			AdditionLineTwo  *string `json:"addition_address_line_two"`
			PostalCode       string  `json:"postal_code"`
			City             string  `json:"city"`
			CountryCode      string  `json:"country_code"`
		} `json:"address"`
	} `json:"electronic_invoicing"`
}

// InvoiceJSON is the invoice response as a partner decodes it.
type InvoiceJSON struct {
	InvoiceID      string   `json:"invoice_id"`
	InvoiceNumber  string   `json:"invoice_number"`
	Kind           string   `json:"kind"`
	TypeCode       string   `json:"type_code"`
	Environment    string   `json:"environment"`
	PDFURL         string   `json:"invoice_pdf_url"`
	UBLURL         string   `json:"invoice_xrechnung_url"`
	CIIURL         string   `json:"invoice_cii_url"`
	Electronic     bool     `json:"electronic_invoicing"`
	CustomerID     *string  `json:"customer_id"`
	CollectionID   *string  `json:"billablable_collection_id"`
	RefersTo       *string  `json:"refers_to_invoice_id"`
	RefersToNumber *string  `json:"refers_to_invoice_number"`
	CancelledBy    *string  `json:"cancelled_by_invoice_id"`
	IssueDate      string   `json:"issue_date"`
	DueDate        *string  `json:"due_date"`
	Recipient      []string `json:"recipient_address_lines"`
	ServicePeriod  struct {
		Label, Text, Start, End string
	} `json:"service_period"`
	Lines []struct {
		BillableItemID string  `json:"billable_item_id"`
		Position       int     `json:"position"`
		InvoicedBy     *string `json:"invoiced_by_invoice_number"`
		Description    string  `json:"description"`
		Gross          int64   `json:"gross_amount_in_cents"`
		Net            int64   `json:"net_amount_in_cents"`
		VAT            int64   `json:"vat_amount_in_cents"`
		ItemAmount     int64   `json:"item_amount_in_cents"`
		VATRateBP      int64   `json:"vat_rate_bp"`
		Passive        []struct {
			Name        string `json:"name"`
			Amount      int64  `json:"amount_in_cents"`
			Beneficiary bool   `json:"beneficiary"`
		} `json:"passive_participants"`
	} `json:"lines"`
	Totals struct {
		Net         int64  `json:"net_amount_in_cents"`
		VAT         int64  `json:"vat_amount_in_cents"`
		Gross       int64  `json:"gross_amount_in_cents"`
		Payable     int64  `json:"payable_amount_in_cents"`
		PayableText string `json:"payable_amount_text"`
		Breakdown   []struct {
			Rate  int64 `json:"vat_rate_bp"`
			Net   int64 `json:"net_amount_in_cents"`
			VAT   int64 `json:"vat_amount_in_cents"`
			Gross int64 `json:"gross_amount_in_cents"`
		} `json:"vat_breakdown"`
	} `json:"totals"`
	Subject      *string `json:"subject"`
	Notes        *string `json:"notes"`
	Before       *string `json:"custom_text_before_table"`
	After        *string `json:"custom_text_after_table"`
	PaymentTerms string  `json:"payment_terms"`
}

// orderSingles orders n single adult tickets with key and returns their
// billable item ids.
func orderSingles(t *testing.T, e *apitest.Env, key string, n int) []string {
	t.Helper()
	ids := productIDs(t, e)
	var pids []string
	for i := 0; i < n; i++ {
		pids = append(pids, ids["single/adult"])
	}
	var o struct {
		Coupons []struct {
			BillableItemID *string `json:"billable_item_id"`
		} `json:"coupons"`
	}
	e.Must(201, apitest.Req{Method: "POST", Path: "/v6/ticketing/orders.json", Key: key, Body: map[string]any{"product_ids": pids}}).JSON(t, &o)
	var out []string
	for _, c := range o.Coupons {
		if c.BillableItemID == nil {
			t.Fatal("single ticket coupon without billable_item_id")
		}
		out = append(out, *c.BillableItemID)
	}
	return out
}

func newCustomer(t *testing.T, e *apitest.Env, key string, lines []string, ei map[string]any) string {
	t.Helper()
	c := map[string]any{"address_lines": lines}
	path := "/v5/ticketing/customers.json"
	if ei != nil {
		c["electronic_invoicing"] = ei
		path = "/v9/ticketing/customers.json"
	}
	return e.Must(201, apitest.Req{Method: "POST", Path: path, Key: key, Body: map[string]any{"customer": c}}).Map(t)["id"].(string)
}

// electronic returns a complete electronic_invoicing object.
func electronic(name, scheme, address, ref, postal string) map[string]any {
	return map[string]any{"electronic_address": address, "electronic_address_scheme_id": scheme, "buyer_reference": ref,
		"address": map[string]any{"name": name, "street_with_number": "Große Straße 5", "postal_code": postal, "city": "Dresden", "country_code": "DE"}}
}

func item(t *testing.T, e *apitest.Env, key, id string) map[string]any {
	t.Helper()
	return e.Must(200, apitest.Req{Method: "GET", Path: "/v5/ticketing/billable_item/" + id + ".json", Key: key}).Map(t)
}

func put(t *testing.T, e *apitest.Env, key, id string, body any) map[string]any {
	t.Helper()
	return e.Must(200, apitest.Req{Method: "PUT", Path: "/v5/ticketing/billable_item/" + id + ".json", Key: key, Body: body}).Map(t)
}

func issue(t *testing.T, e *apitest.Env, key, itemID, customerID string, body any) InvoiceJSON {
	t.Helper()
	path := "/v5/ticketing/billable_item/" + itemID + "/invoice.json"
	if customerID != "" {
		path = "/v5/ticketing/billable_item/" + itemID + "/invoice/" + customerID + ".json"
	}
	var inv InvoiceJSON
	e.Must(201, apitest.Req{Method: "POST", Path: path, Key: key, Body: body}).JSON(t, &inv)
	return inv
}

// runJobs runs every due job of the server's queue.
func runJobs(t *testing.T, e *apitest.Env) int {
	t.Helper()
	n, err := e.App.Jobs.RunOnce(context.Background())
	if err != nil {
		t.Fatalf("jobs: %v", err)
	}
	return n
}

// get downloads a URL of the invoice response (no key).
func get(t *testing.T, e *apitest.Env, url string, want int) *apitest.Resp {
	t.Helper()
	return e.Must(want, apitest.Req{Method: "GET", Path: strings.TrimPrefix(url, e.URL)})
}

func count(t *testing.T, e *apitest.Env, table string) int {
	t.Helper()
	n, err := e.Store.Read().CountRows(context.Background(), table)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// xsdValid validates a downloaded XML file with xmllint against the
// official schema of its root (UBL Invoice, UBL CreditNote or CII).
func xsdValid(t *testing.T, name string, body []byte) {
	t.Helper()
	schema := testtool.XSDCII
	switch {
	case strings.Contains(string(body), "<CreditNote"):
		schema = testtool.XSDUBLCreditNote
	case strings.Contains(string(body), "<Invoice"):
		schema = testtool.XSDUBLInvoice
	}
	f := testtool.WriteFile(t, t.TempDir(), name, body)
	if out, ok := testtool.XMLLint(t, schema, f); !ok {
		t.Errorf("%s is not valid against %s: %s", name, schema, out)
	}
}

// pdfCheck extracts the PDF's text (pdftotext) and its embedded file
// (pdfdetach) and returns both.
func pdfCheck(t *testing.T, body []byte) (text string, attachment []byte) {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "doc.pdf")
	if err := os.WriteFile(f, body, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-layout", f, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	list, err := exec.Command("pdfdetach", "-list", f).Output()
	if err != nil {
		t.Fatalf("pdfdetach: %v", err)
	}
	if strings.Contains(string(list), "factur-x.xml") {
		att := filepath.Join(dir, "att.xml")
		if o, err := exec.Command("pdfdetach", "-save", "1", "-o", att, f).CombinedOutput(); err != nil {
			t.Fatalf("pdfdetach -save: %v %s", err, o)
		}
		if attachment, err = os.ReadFile(att); err != nil {
			t.Fatal(err)
		}
	}
	return string(out), attachment
}

func jsonDecode(res *http.Response, v any) error { return json.NewDecoder(res.Body).Decode(v) }
