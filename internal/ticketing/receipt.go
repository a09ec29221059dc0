package ticketing

import (
	"time"

	"github.com/farebox/farebox/internal/account"
)

// Cancellation types of a receipt: an ordinary cancellation ends at the
// contractual date (subscription.CancellationEffective); an extraordinary
// one (for cause, § 314 BGB) is not offered by the API yet, the type
// exists so that receipts keep one shape when it is.
const (
	CancellationOrdinary      = "ordinary"
	CancellationExtraordinary = "extraordinary"
)

// CancellationReceipt is the confirmation of a subscription's cancellation
// (§ 312k BGB): when it was received, its type, when the contract ends,
// the subscription and its product. Written once with the cancellation and
// never changed (docs/books.md).
type CancellationReceipt struct {
	ID             string
	SubscriptionID string
	AccountID      string
	Environment    account.Environment
	ProductID      string
	ProductName    string
	Type           string
	ReceivedAt     time.Time
	EffectiveEnd   time.Time // the inclusive last second of the contract
	Actor          account.Actor
	CreatedAt      time.Time
}
