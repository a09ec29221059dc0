package invoicing

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/money"
)

// checkSplitAgainstBig validates split with ValidateSplit and with a
// math/big reference of the rules: accepted exactly when it has 1 to
// MaxSplitShares entries with distinct non-blank customers and positive
// amounts whose exact sum is amount; a prefix sum leaving int64 is reported
// at the share where it first does so.
func checkSplitAgainstBig(t *testing.T, split []Share, amount int64) {
	t.Helper()
	err := ValidateSplit(split, money.Cents(amount))
	want := len(split) >= 1 && len(split) <= MaxSplitShares
	seen := map[string]bool{}
	sum := new(big.Int)
	overflowAt := -1
	for i, s := range split {
		if strings.TrimSpace(s.CustomerID) == "" || seen[s.CustomerID] || s.AmountInCents <= 0 {
			want = false
		}
		seen[s.CustomerID] = true
		sum.Add(sum, big.NewInt(int64(s.AmountInCents)))
		if overflowAt < 0 && !sum.IsInt64() {
			overflowAt = i
		}
	}
	if sum.Cmp(big.NewInt(amount)) != 0 {
		want = false
	}
	if want != (err == nil) {
		t.Fatalf("ValidateSplit(%v, %d) = %v; big-integer reference says valid=%v (sum %s)", split, amount, err, want, sum)
	}
	if err == nil {
		return
	}
	ae := apperr.As(err)
	if ae == nil || ae.Kind != apperr.Unprocessable || len(ae.Details) == 0 {
		t.Fatalf("ValidateSplit(%v, %d): not a 422 with details: %v", split, amount, err)
	}
	if overflowAt >= 0 {
		field := fmt.Sprintf("/split/%d/amount_in_cents", overflowAt)
		found := false
		for _, d := range ae.Details {
			found = found || d.Field == field
			if d.Field == "/split" && strings.Contains(d.Message, "sum to") {
				t.Fatalf("overflowing split %v reported a wrapped sum: %s", split, d.Message)
			}
		}
		if !found {
			t.Fatalf("overflowing split %v (prefix leaves int64 at %d): details %v do not name %s", split, overflowAt, ae.Details, field)
		}
	}
}

// TestValidateSplitOverflow is the case of issue 14: the wrapped sum of two
// maximal shares and 382 equals the item's 380 cents.
func TestValidateSplitOverflow(t *testing.T) {
	split := []Share{{"a", math.MaxInt64}, {"b", math.MaxInt64}, {"c", 382}}
	err := ValidateSplit(split, 380)
	ae := apperr.As(err)
	if ae == nil || ae.Kind != apperr.Unprocessable || ae.Code != "invalid_split" || ae.Details[0].Field != "/split/1/amount_in_cents" {
		t.Fatalf("ValidateSplit(max, max, 382 on 380) = %v", err)
	}
	checkSplitAgainstBig(t, split, 380)
	// The largest sums that fit are exact and accepted.
	checkSplitAgainstBig(t, []Share{{"a", math.MaxInt64 - 1}, {"b", 1}}, math.MaxInt64)
	checkSplitAgainstBig(t, []Share{{"a", math.MaxInt64}, {"b", 1}}, math.MaxInt64)
}

// TestValidateSplitProperty compares ValidateSplit with the big-integer
// reference over random splits biased to the int64 edges.
func TestValidateSplitProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 3))
	for n := 0; n < 20000; n++ {
		split, amount := randomSplit(r)
		checkSplitAgainstBig(t, split, amount)
	}
}

func randomAmount(r *rand.Rand) int64 {
	switch r.IntN(6) {
	case 0:
		return math.MaxInt64 - r.Int64N(1000)
	case 1:
		return math.MaxInt64/int64(1+r.IntN(4)) + r.Int64N(3) - 1
	case 2:
		return r.Int64N(1000) - 10
	case 3:
		return math.MinInt64 + r.Int64N(1000)
	default:
		return r.Int64()
	}
}

func randomSplit(r *rand.Rand) ([]Share, int64) {
	n := r.IntN(MaxSplitShares + 3)
	split := make([]Share, n)
	for i := range split {
		split[i] = Share{CustomerID: fmt.Sprintf("c%d", r.IntN(n*4+1)), AmountInCents: money.Cents(randomAmount(r))}
	}
	// Often make the amount the wrapped (int64) sum, the case that slipped through.
	var wrapped int64
	for _, s := range split {
		wrapped += int64(s.AmountInCents)
	}
	if r.IntN(2) == 0 {
		return split, wrapped
	}
	return split, randomAmount(r)
}

// FuzzValidateSplit compares ValidateSplit with the big-integer reference
// for arbitrary shares (CI fuzzes it, .ci/run): 9 bytes per share (customer
// byte, amount), the item amount first.
func FuzzValidateSplit(f *testing.F) {
	enc := func(amount int64, shares ...Share) []byte {
		b := binary.BigEndian.AppendUint64(nil, uint64(amount))
		for _, s := range shares {
			b = append(b, s.CustomerID[0])
			b = binary.BigEndian.AppendUint64(b, uint64(s.AmountInCents))
		}
		return b
	}
	f.Add(enc(380, Share{"a", math.MaxInt64}, Share{"b", math.MaxInt64}, Share{"c", 382}))
	f.Add(enc(380, Share{"a", 100}, Share{"b", 280}))
	f.Add(enc(math.MaxInt64, Share{"a", math.MaxInt64 - 1}, Share{"b", 1}))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 8 {
			return
		}
		amount := int64(binary.BigEndian.Uint64(data))
		var split []Share
		for rest := data[8:]; len(rest) >= 9; rest = rest[9:] {
			id := ""
			if rest[0] != ' ' {
				id = fmt.Sprintf("c%d", rest[0]%32)
			}
			split = append(split, Share{CustomerID: id, AmountInCents: money.Cents(int64(binary.BigEndian.Uint64(rest[1:9])))})
		}
		checkSplitAgainstBig(t, split, amount)
	})
}
