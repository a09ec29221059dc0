package invoicedoc

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
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
	slices.SortStableFunc(order, func(a, b int) int { return lines[a].OrderedAt.Compare(lines[b].OrderedAt) })
	out := make([]Position, 0, len(lines))
	// Positions by the hash of their key (positionHash), chained through
	// next when two keys share a hash; identical compares the lines.
	byHash := make(map[uint64]int, len(lines))
	next := make([]int, 0, len(lines))
	seed := maphash.MakeSeed()
	for _, i := range order {
		l := lines[i]
		h := positionHash(seed, l)
		p, ok := byHash[h]
		for ok && p >= 0 && !identical(lines[out[p].Items[0]], l) {
			p = next[p]
		}
		if ok && p >= 0 {
			pos := &out[p]
			pos.Items = append(pos.Items, i)
			pos.Quantity += l.Quantity
			pos.Gross += l.Gross
			pos.Last = l.OrderedAt
			pos.addInvoice(l.Invoice)
			continue
		}
		if first, ok := byHash[h]; ok {
			next = append(next, first)
		} else {
			next = append(next, -1)
		}
		byHash[h] = len(out)
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

// positionHash hashes what makes lines identical for the buyer (identical).
func positionHash(seed maphash.Seed, l Line) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString(l.Name)
	var b [8]byte
	for _, n := range []int64{int64(l.Gross), l.Quantity, l.RateBP, int64(len(l.Split))} {
		binary.LittleEndian.PutUint64(b[:], uint64(n))
		_, _ = h.Write(b[:])
	}
	for _, s := range l.Split {
		h.WriteString(s.Name)
		binary.LittleEndian.PutUint64(b[:], uint64(s.Amount))
		_, _ = h.Write(b[:])
		if s.Invoiced {
			_ = h.WriteByte(1)
		} else {
			_ = h.WriteByte(0)
		}
	}
	return h.Sum64()
}

// identical says whether the buyer could not tell a and b apart: same
// name, gross, quantity, rate and split shares.
func identical(a, b Line) bool {
	return a.Name == b.Name && a.Gross == b.Gross && a.Quantity == b.Quantity && a.RateBP == b.RateBP &&
		slices.Equal(a.Split, b.Split)
}

// Positions groups the document's lines (GroupPositions).
func (d *Document) Positions() []Position { return GroupPositions(d.Lines) }

// SplitTotal is the full amount of one split item of the position.
func (p Position) SplitTotal() money.Cents { return Line{Split: p.Split}.SplitTotal() }
