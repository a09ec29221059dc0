package invoicing

import (
	"fmt"
	"strings"

	"github.com/farebox/farebox/internal/apperr"
)

// MaxSplitShares bounds a split's length.
const MaxSplitShares = 20

// Share is one entry of a billable item's split: the first is the
// beneficiary of the ordered product.
type Share struct {
	CustomerID    string `json:"customer_id"`
	AmountInCents int64  `json:"amount_in_cents"`
}

// ValidateSplit checks a split against the item's full amount: 1 to
// MaxSplitShares entries, each with a customer id and a positive amount, no
// customer twice, and amounts summing to exactly amount. Whether the
// customers exist is the caller's check.
func ValidateSplit(split []Share, amount int64) error {
	const op = "invoicing.ValidateSplit"
	var probs []apperr.FieldError
	add := func(field, format string, args ...any) {
		probs = append(probs, apperr.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if len(split) == 0 || len(split) > MaxSplitShares {
		add("/split", "split must have 1 to %d entries", MaxSplitShares)
	}
	seen := map[string]int{}
	var sum int64
	for i, s := range split {
		f := fmt.Sprintf("/split/%d", i)
		if strings.TrimSpace(s.CustomerID) == "" {
			add(f+"/customer_id", "split[%d].customer_id is required", i)
		} else if j, dup := seen[s.CustomerID]; dup {
			add(f+"/customer_id", "split[%d].customer_id repeats split[%d]: a customer appears once in a split", i, j)
		} else {
			seen[s.CustomerID] = i
		}
		if s.AmountInCents <= 0 {
			add(f+"/amount_in_cents", "split[%d].amount_in_cents must be a positive number of cents", i)
		}
		sum += s.AmountInCents
	}
	if len(split) > 0 && sum != amount {
		add("/split", "the split amounts sum to %d cents but the billable item's full amount is %d cents", sum, amount)
	}
	if len(probs) > 0 {
		code := "invalid_split"
		if len(probs) == 1 && probs[0].Field == "/split" && len(split) > 0 {
			code = "split_sum_mismatch"
		}
		return apperr.E(op, apperr.Unprocessable, code, probs[0].Message).WithDetails(probs...)
	}
	return nil
}
