package invoicing

import (
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/invoicedoc"
)

// Series names the number series a document takes its number from: one per
// environment, document family and Europe/Berlin calendar year. Invoices
// and cancellations share the invoice series (docs/invoicing.md); payment
// notices have their own, because they are not invoices.
func Series(env account.Environment, kind invoicedoc.Kind, issued time.Time) string {
	prefix := ""
	if kind == invoicedoc.KindPaymentNotice {
		prefix = "ZA-"
	}
	if env == account.Test {
		prefix = "TEST-" + prefix
	}
	return fmt.Sprintf("%s%d", prefix, issued.In(clock.Berlin).Year())
}

// Number formats the n-th number of a series: 2026-000001, TEST-2026-000001,
// ZA-2026-000001, TEST-ZA-2026-000001. Six digits, more when needed.
func Number(series string, n int64) string { return fmt.Sprintf("%s-%06d", series, n) }
