package invoicing

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/money"
)

// MaxSplitShares bounds a split's length.
const MaxSplitShares = 20

// Share is one entry of a billable item's split: the first is the
// beneficiary of the ordered product.
type Share struct {
	CustomerID    string      `json:"customer_id"`
	AmountInCents money.Cents `json:"amount_in_cents"`
}

// ValidateSplit checks a split against the item's full amount: 1 to
// MaxSplitShares entries, each with a customer id and a positive amount, no
// customer twice, and amounts summing to exactly amount. The sum is
// overflow-checked: shares whose sum leaves int64 are refused at the share
// where it overflows, never wrapped around to a matching total. Whether the
// customers exist is the caller's check.
func ValidateSplit(split []Share, amount money.Cents) error {
	const op = "invoicing.ValidateSplit"
	var probs []apperr.FieldError
	add := func(field, format string, args ...any) {
		probs = append(probs, apperr.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if len(split) == 0 || len(split) > MaxSplitShares {
		add("/split", "split must have 1 to %d entries", MaxSplitShares)
	}
	seen := map[string]int{}
	var sum money.Cents
	overflow := false
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
		if overflow {
			continue
		}
		var err error
		if sum, err = money.Add(sum, s.AmountInCents); err != nil {
			overflow = true
			add(f+"/amount_in_cents", "split[0..%d].amount_in_cents sum beyond the largest amount (%d cents); the shares must sum to the billable item's full amount of %d cents", i, money.Max, amount)
		}
	}
	if len(split) > 0 && !overflow && sum != amount {
		add("/split", "the split amounts sum to %d cents but the billable item's full amount is %d cents", sum, amount)
	}
	if len(probs) > 0 {
		code := CodeInvalidSplit
		if len(probs) == 1 && probs[0].Field == "/split" && len(split) > 0 {
			code = CodeSplitSumMismatch
		}
		return apperr.E(op, apperr.Unprocessable, code, probs[0].Message).WithDetails(probs...)
	}
	return nil
}

// DecodeSplit parses a split as sent by a partner: an array of
// {customer_id: string, amount_in_cents: integer}. A key other than those
// two in an entry is a 400 unknown_field naming it (partner endpoints reject
// unknown fields everywhere, decisions.md); a wrong shape or type is a 422
// invalid_split naming the entry or member. Whether the shares are valid is
// ValidateSplit's check.
func DecodeSplit(raw json.RawMessage) ([]Share, error) {
	const op = "invoicing.DecodeSplit"
	invalid := func(field, msg string) error {
		return apperr.Validation(op, CodeInvalidSplit, field, msg)
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil || entries == nil {
		return nil, invalid("/split", "split must be an array of {customer_id: string, amount_in_cents: integer}")
	}
	split := make([]Share, len(entries))
	for i, e := range entries {
		f := fmt.Sprintf("/split/%d", i)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(e, &m); err != nil || m == nil {
			return nil, invalid(f, fmt.Sprintf("split[%d] must be an object {customer_id: string, amount_in_cents: integer}", i))
		}
		for k := range m {
			if k != "customer_id" && k != "amount_in_cents" {
				msg := fmt.Sprintf("unknown field %q in split[%d]", k, i)
				return nil, apperr.E(op, apperr.Invalid, CodeUnknownField, msg).
					WithDetails(apperr.FieldError{Field: f + "/" + apperr.EscapeToken(k), Message: msg})
			}
		}
		if v, ok := m["customer_id"]; ok && json.Unmarshal(v, &split[i].CustomerID) != nil {
			return nil, invalid(f+"/customer_id", fmt.Sprintf("split[%d].customer_id must be a string", i))
		}
		if v, ok := m["amount_in_cents"]; ok && json.Unmarshal(v, &split[i].AmountInCents) != nil {
			return nil, invalid(f+"/amount_in_cents", fmt.Sprintf("split[%d].amount_in_cents must be an integer number of cents from 1 to %d", i, money.Max))
		}
	}
	return split, nil
}
