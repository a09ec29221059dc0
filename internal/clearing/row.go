package clearing

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/farebox/farebox/internal/money"
)

// Kinds of a clearing row.
const (
	// KindSale is a ticket month of the reporting month, reported once.
	KindSale = "sale"
	// KindCorrection is a change to a ticket month of an earlier, already
	// reported month: the reversal of what was reported (negative amounts,
	// count -1) and the row as it is now (positive, count 1), or a ticket
	// month of an earlier month reported late.
	KindCorrection = "correction"
)

// Source is a sold ticket month as the database holds it: the billable
// item of a cycle of the national product (or a variant), the cycle's
// period, the tariff settings of the newest ticket issued for it (a
// restore's ticket included) and of the newest coupon of its
// subscription, and what an earlier report said of it.
type Source struct {
	BillableItemID string
	AccountID      string
	ProductID      string
	Description    string
	Gross          money.Cents
	VATRateBP      int64
	Currency       string
	ValidFrom      time.Time
	ValidUntil     time.Time
	TicketTariff   []byte
	CouponTariff   []byte
	Reported       *Reported
}

// Reported is the attribution a ticket month was last reported with.
type Reported struct {
	PostalCode string
	State      State
	Gross      money.Cents
	Month      Month // the report that said so
}

// PostalCode is the ticket month's postal code: the ticket's, or when no
// ticket was issued yet the coupon's ("" when neither has one).
func (s Source) PostalCode() string {
	if c := PostalCodeOf(s.TicketTariff); c != "" {
		return c
	}
	return PostalCodeOf(s.CouponTariff)
}

// Row is one line of a clearing report.
type Row struct {
	Month          Month // the reporting month
	Seq            int64 // the row's number in its report, from 1
	Kind           string
	BillableItemID string
	Period         Month // the ticket month
	ValidFrom      time.Time
	ValidUntil     time.Time
	PostalCode     string
	State          State
	ProductID      string
	ProductName    string
	AccountID      string // the selling partner
	Issuer         string // the issuing company (the seller)
	Count          int    // 1, or -1 for a reversal
	Gross          money.Cents
	Net            money.Cents
	VAT            money.Cents
	VATRateBP      int64
	Currency       string
}

// Sale is the row of s as it is now, in report m.
func (s Source) Sale(m Month, kind string, loc *time.Location, issuer string) Row {
	code := s.PostalCode()
	if code == "" && s.Reported != nil {
		// The postal code was erased (retention) after it was reported:
		// what was reported stands; erasure is no correction.
		code = s.Reported.PostalCode
	}
	st, _ := StateOf(code)
	net, vat := money.Split(s.Gross, s.VATRateBP)
	return Row{Month: m, Kind: kind, BillableItemID: s.BillableItemID, Period: MonthOf(s.ValidFrom, loc),
		ValidFrom: s.ValidFrom, ValidUntil: s.ValidUntil, PostalCode: code, State: st, ProductID: s.ProductID,
		ProductName: s.Description, AccountID: s.AccountID, Issuer: issuer, Count: 1,
		Gross: s.Gross, Net: net, VAT: vat, VATRateBP: s.VATRateBP, Currency: s.Currency}
}

// Corrections are the rows report m adds for s, a ticket month of an
// earlier month: none when what was reported still holds; the ticket
// month when it was never reported; else the reversal of what was
// reported and the ticket month as it is now.
func (s Source) Corrections(m Month, loc *time.Location, issuer string) []Row {
	now := s.Sale(m, KindCorrection, loc, issuer)
	r := s.Reported
	if r == nil {
		return []Row{now}
	}
	if r.PostalCode == now.PostalCode && r.State == now.State && r.Gross == now.Gross {
		return nil
	}
	old := now
	old.PostalCode, old.State, old.Count = r.PostalCode, r.State, -1
	net, vat := money.Split(r.Gross, s.VATRateBP)
	old.Gross, old.Net, old.VAT = -r.Gross, -net, -vat
	return []Row{old, now}
}

// CSVHeader is the first line of a CSV export.
var CSVHeader = []string{"reporting_month", "row", "kind", "billable_item_id", "ticket_month", "valid_from", "valid_until",
	"postal_code", "federal_state", "product_id", "product_name", "selling_partner", "issuer", "count",
	"gross_amount_in_cents", "net_amount_in_cents", "vat_amount_in_cents", "vat_rate_bp", "currency"}

// CSV is the row's CSV record (the columns of CSVHeader).
func (r Row) CSV() []string {
	return []string{r.Month.String(), strconv.FormatInt(r.Seq, 10), r.Kind, r.BillableItemID, r.Period.String(),
		r.ValidFrom.UTC().Format(time.RFC3339), r.ValidUntil.UTC().Format(time.RFC3339), r.PostalCode, string(r.State),
		r.ProductID, r.ProductName, r.AccountID, r.Issuer, strconv.Itoa(r.Count), strconv.FormatInt(int64(r.Gross), 10),
		strconv.FormatInt(int64(r.Net), 10), strconv.FormatInt(int64(r.VAT), 10), strconv.FormatInt(r.VATRateBP, 10), r.Currency}
}

// RowJSON is a row in the JSON export and the operator API.
type RowJSON struct {
	Row            int64       `json:"row"`
	Kind           string      `json:"kind"`
	BillableItemID string      `json:"billable_item_id"`
	TicketMonth    string      `json:"ticket_month"`
	ValidFrom      string      `json:"valid_from"`
	ValidUntil     string      `json:"valid_until"`
	PostalCode     string      `json:"postal_code"`
	FederalState   string      `json:"federal_state"`
	ProductID      string      `json:"product_id"`
	ProductName    string      `json:"product_name"`
	SellingPartner string      `json:"selling_partner"`
	Issuer         string      `json:"issuer"`
	Count          int         `json:"count"`
	Gross          money.Cents `json:"gross_amount_in_cents"`
	Net            money.Cents `json:"net_amount_in_cents"`
	VAT            money.Cents `json:"vat_amount_in_cents"`
	VATRateBP      int64       `json:"vat_rate_bp"`
	Currency       string      `json:"currency"`
}

// JSON is the row's JSON shape.
func (r Row) JSON() RowJSON {
	return RowJSON{Row: r.Seq, Kind: r.Kind, BillableItemID: r.BillableItemID, TicketMonth: r.Period.String(),
		ValidFrom: r.ValidFrom.UTC().Format(time.RFC3339), ValidUntil: r.ValidUntil.UTC().Format(time.RFC3339),
		PostalCode: r.PostalCode, FederalState: string(r.State), ProductID: r.ProductID, ProductName: r.ProductName,
		SellingPartner: r.AccountID, Issuer: r.Issuer, Count: r.Count, Gross: r.Gross, Net: r.Net, VAT: r.VAT,
		VATRateBP: r.VATRateBP, Currency: r.Currency}
}

// Sum is a count of ticket months and their amounts.
type Sum struct {
	Count int         `json:"ticket_months"`
	Gross money.Cents `json:"gross_amount_in_cents"`
	Net   money.Cents `json:"net_amount_in_cents"`
	VAT   money.Cents `json:"vat_amount_in_cents"`
}

func (s *Sum) add(r Row) {
	s.Count += r.Count
	s.Gross += r.Gross
	s.Net += r.Net
	s.VAT += r.VAT
}

// Totals are a report's sums: per federal state (the 16 and not-germany
// and unmapped, every one listed), per product and over all.
type Totals struct {
	States   map[State]*Sum
	Products map[string]*Sum
	Names    map[string]string // product id → name
	All      Sum
}

// NewTotals starts empty totals with a zero row per state.
func NewTotals() *Totals {
	t := &Totals{States: map[State]*Sum{}, Products: map[string]*Sum{}, Names: map[string]string{}}
	for _, s := range Rows {
		t.States[s] = &Sum{}
	}
	return t
}

// Add counts r.
func (t *Totals) Add(r Row) {
	t.States[r.State].add(r)
	if t.Products[r.ProductID] == nil {
		t.Products[r.ProductID] = &Sum{}
		t.Names[r.ProductID] = r.ProductName
	}
	t.Products[r.ProductID].add(r)
	t.All.add(r)
}

// Writer writes rows as CSV or as a JSON report, one row at a time: the
// rows are never all held (docs/clearing.md "Export").
type Writer struct {
	w      io.Writer
	csv    *csv.Writer
	enc    *json.Encoder
	n      int
	totals *Totals
}

// NewWriter starts a report of month m in format ("csv" or "json") on w;
// head is the JSON report's fields before its rows.
func NewWriter(w io.Writer, format string, head map[string]any) (*Writer, error) {
	wr := &Writer{w: w, totals: NewTotals()}
	if format == "csv" {
		wr.csv = csv.NewWriter(w)
		return wr, wr.csv.Write(CSVHeader)
	}
	b, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	b = append(b[:len(b)-1], []byte(`,"rows":[`)...)
	if len(head) == 0 {
		b = []byte(`{"rows":[`)
	}
	_, err = w.Write(b)
	wr.enc = json.NewEncoder(w)
	return wr, err
}

// Write writes one row and counts it.
func (wr *Writer) Write(r Row) error {
	wr.totals.Add(r)
	if wr.csv != nil {
		return wr.csv.Write(r.CSV())
	}
	if wr.n > 0 {
		if _, err := io.WriteString(wr.w, ","); err != nil {
			return err
		}
	}
	wr.n++
	return wr.enc.Encode(r.JSON())
}

// Close ends the report (the JSON report with its totals) and returns them.
func (wr *Writer) Close() (*Totals, error) {
	if wr.csv != nil {
		wr.csv.Flush()
		return wr.totals, wr.csv.Error()
	}
	b, err := json.Marshal(wr.totals.JSON())
	if err != nil {
		return nil, err
	}
	_, err = io.WriteString(wr.w, `],"totals":`+string(b)+"}\n")
	return wr.totals, err
}

// TotalsJSON is the totals' JSON shape.
type TotalsJSON struct {
	States   []StateSum   `json:"federal_states"`
	Products []ProductSum `json:"products"`
	All      Sum          `json:"all"`
}

// StateSum is a state's row of the totals.
type StateSum struct {
	State string `json:"federal_state"`
	Name  string `json:"name"`
	Sum
}

// ProductSum is a product's row of the totals.
type ProductSum struct {
	ProductID string `json:"product_id"`
	Name      string `json:"product_name"`
	Sum
}

// JSON is the totals in report order: the states (ISO order), not-germany,
// unmapped; the products by id.
func (t *Totals) JSON() TotalsJSON {
	out := TotalsJSON{All: t.All, States: []StateSum{}, Products: []ProductSum{}}
	for _, s := range Rows {
		out.States = append(out.States, StateSum{State: string(s), Name: s.Name(), Sum: *t.States[s]})
	}
	ids := make([]string, 0, len(t.Products))
	for id := range t.Products {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		out.Products = append(out.Products, ProductSum{ProductID: id, Name: t.Names[id], Sum: *t.Products[id]})
	}
	return out
}

// Report is a frozen report's head.
type Report struct {
	Month      Month
	Issuer     string
	ReportedAt time.Time
	Rows       int64
	Gross      money.Cents
}

// After is a position in the ticket months of a period: they are read in
// order of their start and billable item id.
type After struct {
	ValidFrom      time.Time
	BillableItemID string
}
