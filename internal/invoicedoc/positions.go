package invoicedoc

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/money"
)

// Position is one line of the printed and the XML document (BG-25): the
// billable items that are identical for the buyer (same ticket name,
// amount, quantity, VAT rate and split) grouped with a quantity. Identical items therefore always show identical amounts (one
// unit price and one net for all of them), and the totals stay exact:
// only a position's net is rounded, never the units'.
type Position struct {
	Number    int         // 1-based, in order time (BT-126)
	Items     []int       // indices into Document.Lines, in order time
	Name      string      // BT-153
	Quantity  int64       // Σ item quantities (BT-129)
	UnitGross money.Cents // gross amount of one item, VAT included
	Gross     money.Cents // Σ item gross
	RateBP    int64       // BT-152
	First     time.Time   // earliest order time of the items
	Last      time.Time   // latest order time of the items
	Split     []Share     // the split of each item (identical by construction)
	Invoices  []Reference // distinct invoices billing the items (collection payment notices)
}

// GroupPositions groups lines into positions ordered by their first order
// time (ties: the earlier line). Lines are identical when the buyer could
// not tell them apart on the document: same name, gross, quantity, rate and
// split shares.
func GroupPositions(lines []Line) []Position {
	order := make([]int, len(lines))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return lines[order[a]].OrderedAt.Before(lines[order[b]].OrderedAt) })
	var out []Position
	byKey := map[string]int{}
	for _, i := range order {
		l := lines[i]
		k := positionKey(l)
		if p, ok := byKey[k]; ok {
			pos := &out[p]
			pos.Items = append(pos.Items, i)
			pos.Quantity += l.Quantity
			pos.Gross += l.Gross
			pos.Last = l.OrderedAt
			pos.addInvoice(l.Invoice)
			continue
		}
		byKey[k] = len(out)
		out = append(out, Position{Number: len(out) + 1, Items: []int{i}, Name: l.Name, Quantity: l.Quantity,
			UnitGross: l.Gross, Gross: l.Gross, RateBP: l.RateBP, First: l.OrderedAt, Last: l.OrderedAt,
			Split: l.Split})
		out[len(out)-1].addInvoice(l.Invoice)
	}
	return out
}

func (p *Position) addInvoice(r *Reference) {
	if r == nil {
		return
	}
	for _, have := range p.Invoices {
		if have.Number == r.Number {
			return
		}
	}
	p.Invoices = append(p.Invoices, *r)
}

// positionKey is what makes two lines identical for the buyer.
func positionKey(l Line) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q|%d|%d|%d|", l.Name, l.Gross, l.Quantity, l.RateBP)
	for _, s := range l.Split {
		fmt.Fprintf(&b, "%q:%d:%t,", s.Name, s.Amount, s.Invoiced)
	}
	return b.String()
}

// Positions groups the document's lines (GroupPositions).
func (d *Document) Positions() []Position { return GroupPositions(d.Lines) }

// SplitTotal is the full amount of one split item of the position.
func (p Position) SplitTotal() money.Cents { return Line{Split: p.Split}.SplitTotal() }
