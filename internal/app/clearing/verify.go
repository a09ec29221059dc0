package clearing

import (
	"context"
	"fmt"
	"slices"

	"github.com/farebox/farebox/internal/clearing"
	"github.com/farebox/farebox/internal/money"
)

// MaxDifferences is how many differences Verify lists (all are counted).
const MaxDifferences = 1000

// Difference is one ticket month whose clearing differs from its
// billable item.
type Difference struct {
	BillableItemID string      `json:"billable_item_id"`
	Problem        string      `json:"problem"`
	Cleared        money.Cents `json:"cleared_gross_amount_in_cents"`
	Billable       money.Cents `json:"billable_gross_amount_in_cents"`
}

// Verification is the reconciliation of a month's ticket months: what
// the clearing says of them (every report's rows about them: the month's
// own report and the later reports' corrections; a preview when the
// month is not reported) against their billable items, summed on their
// own in the database.
type Verification struct {
	Month           string       `json:"month"`
	Final           bool         `json:"final"`
	ClearedMonths   int          `json:"cleared_ticket_months"`
	ClearedGross    money.Cents  `json:"cleared_gross_amount_in_cents"`
	BillableMonths  int          `json:"billable_ticket_months"`
	BillableGross   money.Cents  `json:"billable_gross_amount_in_cents"`
	DifferenceCount int          `json:"difference_count"`
	Differences     []Difference `json:"differences"`
	OK              bool         `json:"ok"`
}

type cleared struct {
	count      int
	gross      money.Cents
	postalCode string
	state      clearing.State
}

// Verify reconciles month m (it reports nothing: a month not reported is
// checked in its preview).
func (s *Service) Verify(ctx context.Context, m clearing.Month) (Verification, error) {
	v := Verification{Month: m.String(), Differences: []Difference{}}
	q := s.DB.Read()
	_, final, err := q.ClearingReport(ctx, m)
	if err != nil {
		return v, err
	}
	v.Final = final
	byItem := map[string]*cleared{}
	add := func(r clearing.Row) error {
		if r.Period != m {
			return nil // a preview's correction of an earlier month
		}
		c := byItem[r.BillableItemID]
		if c == nil {
			c = &cleared{}
			byItem[r.BillableItemID] = c
		}
		c.count += r.Count
		c.gross += r.Gross
		if r.Count > 0 {
			c.postalCode, c.state = r.PostalCode, r.State
		}
		v.ClearedMonths += r.Count
		v.ClearedGross += r.Gross
		return nil
	}
	if final {
		err = q.ClearingRowsOfPeriod(ctx, m, add)
	} else {
		err = s.generate(ctx, q, m, add)
	}
	if err != nil {
		return v, err
	}
	products := s.products()
	if v.BillableMonths, v.BillableGross, err = q.ClearingBillableTotals(ctx, products, m.Start(s.loc), m.End(s.loc)); err != nil {
		return v, err
	}
	differ := func(d Difference) {
		v.DifferenceCount++
		if len(v.Differences) < MaxDifferences {
			v.Differences = append(v.Differences, d)
		}
	}
	err = s.eachSource(ctx, q, products, m.Start(s.loc), m.End(s.loc), func(src clearing.Source) error {
		c := byItem[src.BillableItemID]
		delete(byItem, src.BillableItemID)
		now := src.Sale(m, clearing.KindSale, s.loc, s.issuer)
		switch {
		case c == nil:
			differ(Difference{src.BillableItemID, "not in the clearing", 0, src.Gross})
		case c.count != 1:
			differ(Difference{src.BillableItemID, fmt.Sprintf("counted %d times", c.count), c.gross, src.Gross})
		case c.gross != src.Gross:
			differ(Difference{src.BillableItemID, "amount differs", c.gross, src.Gross})
		case c.postalCode != now.PostalCode || c.state != now.State:
			differ(Difference{src.BillableItemID, fmt.Sprintf("changed since reported: postal code %s (%s) is now %s (%s); the next report corrects it",
				c.postalCode, c.state, now.PostalCode, now.State), c.gross, src.Gross})
		}
		return nil
	})
	if err != nil {
		return v, err
	}
	rest := make([]string, 0, len(byItem))
	for id := range byItem {
		rest = append(rest, id)
	}
	slices.Sort(rest)
	for _, id := range rest {
		if c := byItem[id]; c.count != 0 || c.gross != 0 {
			differ(Difference{id, "cleared but not a billable ticket month of this month", c.gross, 0})
		}
	}
	if v.ClearedMonths != v.BillableMonths || v.ClearedGross != v.BillableGross {
		differ(Difference{"", fmt.Sprintf("totals differ: %d ticket months cleared, %d billable", v.ClearedMonths, v.BillableMonths),
			v.ClearedGross, v.BillableGross})
	}
	v.OK = v.DifferenceCount == 0
	return v, nil
}
