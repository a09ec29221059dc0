package xrechnung

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
	"github.com/farebox/farebox/internal/money"
)

// identicalDoc is a collection of n identical tickets at price cents,
// ordered on different days, interleaved with m tickets of another product
// at 990 cents.
func identicalDoc(price int64, n, m int) *invoicedoc.Document {
	d := invoicetest.CollectionMonth()
	d.Lines = nil
	t0 := time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC)
	for i := 0; i < n+m; i++ {
		l := invoicedoc.Line{BillableItemID: fmt.Sprintf("fb-billable-%04d", i), Name: "Einzelfahrt", Quantity: 1,
			Gross: money.Cents(price), RateBP: 700, OrderedAt: t0.Add(time.Duration(i) * 7 * time.Hour)}
		if i >= n { // the other product, ordered between the identical items
			l.Name, l.Gross = "Tageskarte", 990
			l.OrderedAt = t0.Add(time.Duration(i-n)*7*time.Hour + time.Hour)
		}
		d.Lines = append(d.Lines, l)
	}
	return d
}

// TestIdenticalItemsProperty: for n identical items at every price from
// 0,01 € to 15,00 € (and large ones), the items form one position, so every
// identical item shows the same amounts; the position net is quantity ×
// BT-146 rounded to the cent (R120); line nets add up to the taxable amount
// and the gross total is exactly what was charged (BR-CO-10, BR-S-08,
// BR-CO-15); the VAT is within BR-CO-17's tolerance. Then a sample is
// encoded in both syntaxes and read back.
func TestIdenticalItemsProperty(t *testing.T) {
	prices := []int64{99999, 4900, 123456}
	for p := int64(1); p <= 1500; p++ {
		prices = append(prices, p)
	}
	for _, price := range prices {
		for _, n := range []int{2, 3, 7, 12, 100, 500} {
			d := identicalDoc(price, n, 2)
			pos := d.Positions()
			tot := d.Totals()
			if len(pos) != 2 || pos[0].Quantity != int64(n) || pos[0].Gross != money.Cents(price*int64(n)) || pos[1].Quantity != 2 {
				t.Fatalf("price %d n %d: positions %+v", price, n, pos)
			}
			var nets, items money.Cents
			for i, p := range pos {
				nets += tot.Positions[i].Net
				if got := qtyTimesPrice(t, strconv.FormatInt(p.Quantity, 10), unitPrice(tot.Positions[i].Net, p.Quantity)); got != tot.Positions[i].Net {
					t.Fatalf("price %d n %d: %d × %s = %d, line net %d", price, n, p.Quantity, unitPrice(tot.Positions[i].Net, p.Quantity), got, tot.Positions[i].Net)
				}
			}
			for _, l := range tot.Lines {
				items += l.Net
			}
			charged := money.Cents(price*int64(n) + 2*990)
			if nets != tot.Net || items != tot.Net || tot.Gross != charged || tot.Net+tot.VAT != charged || len(tot.Groups) != 1 || tot.Groups[0].Net != nets {
				t.Fatalf("price %d n %d: Σ positions %d, Σ items %d, net %d, VAT %d, gross %d, charged %d", price, n, nets, items, tot.Net, tot.VAT, tot.Gross, charged)
			}
			if diff := tot.VAT - money.Share(tot.Net, 700, 10000); diff < -1 || diff > 1 {
				t.Fatalf("price %d n %d: VAT %d vs net × 7 %% %d", price, n, tot.VAT, money.Share(tot.Net, 700, 10000))
			}
		}
	}
	for _, price := range []int64{1, 99, 299, 380, 4900, 99999} {
		for _, n := range []int{3, 500} {
			d := identicalDoc(price, n, 1)
			tot := d.Totals()
			for _, v := range views(t, d) {
				if len(v.lines) != 2 || v.lines[0].qty != strconv.Itoa(n) || v.lines[0].net != tot.Positions[0].Net ||
					qtyTimesPrice(t, v.lines[0].qty, v.lines[0].price) != v.lines[0].net || v.lineTotal != v.lines[0].net+v.lines[1].net ||
					v.taxIncl != money.Cents(price*int64(n)+990) {
					t.Errorf("%s price %d n %d: lines %+v, BT-106 %d, BT-112 %d", v.syntax, price, n, v.lines, v.lineTotal, v.taxIncl)
				}
			}
		}
	}
}
