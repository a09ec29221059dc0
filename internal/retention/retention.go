// Package retention holds farebox's retention classes (docs/privacy.md):
// how long each kind of stored personal data is kept, the legal floors the
// configured periods may not go below, and the neutral values that take
// the place of erased data in the shapes the SDKs decode. No I/O.
package retention

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Class names a retention class (the "class" of an export or erasure answer).
type Class string

// The retention classes.
const (
	// Identification: a ticket's identification medium (name, birth date)
	// and the residence postal code of its tariff settings (on the ticket
	// and its coupon). Kept IdentificationAfter past the end of the
	// ticket's validity (inspection, complaints, fare disputes), then erased.
	Identification Class = "identification"
	// BillingRecords: billable items, invoices, cancellations, payment
	// notices, their files, and the invoice recipient data of the customer
	// they were issued to. Kept BillingRecords past the end of the calendar
	// year of the newest document (§ 14b UStG, § 147 AO). Issued documents
	// are never altered.
	BillingRecords Class = "billing_records"
)

// Day is 24 hours: periods are given and compared in whole days.
const Day = 24 * time.Hour

// Defaults and legal floors.
const (
	// DefaultIdentification: six months (183 days) after validity ends.
	DefaultIdentification = 183 * Day
	// MinIdentification: a ticket stays disputable (a passenger's complaint
	// about an inspection, a refund claim) for at least 30 days after its
	// validity ends; a shorter setting is refused at start.
	MinIdentification = 30 * Day
	// DefaultBillingYears and MinBillingYears: eight calendar years after
	// the end of the year of the document (§ 14b UStG as amended by BEG
	// IV, in force 2025; § 147 (4) AO counts from the year's end).
	DefaultBillingYears = 8
	MinBillingYears     = 8
)

// Policy is the configured period of each class.
type Policy struct {
	Identification time.Duration
	BillingYears   int
}

// Default is the policy with the default periods.
func Default() Policy {
	return Policy{Identification: DefaultIdentification, BillingYears: DefaultBillingYears}
}

// Validate refuses a period below its legal floor, and an identification
// period longer than the billing records' (nothing personal outlives the
// books). Messages name the setting (--retention-identification,
// --retention-billing-records).
func (p Policy) Validate() error {
	var errs []error
	if p.Identification < MinIdentification {
		errs = append(errs, fmt.Errorf("--retention-identification: %s is shorter than the legal minimum of %d days after a ticket's validity ends (docs/privacy.md)",
			days(p.Identification), MinIdentification/Day))
	}
	if p.BillingYears < MinBillingYears {
		errs = append(errs, fmt.Errorf("--retention-billing-records: %d years is shorter than the legal minimum of %d years for invoices and billing records (§ 14b UStG, § 147 AO)",
			p.BillingYears, MinBillingYears))
	}
	if p.BillingYears <= 100 && p.Identification > time.Duration(p.BillingYears)*366*Day {
		errs = append(errs, errors.New("--retention-identification: must not be longer than --retention-billing-records"))
	}
	if p.BillingYears > 100 {
		errs = append(errs, fmt.Errorf("--retention-billing-records: %d years is more than 100", p.BillingYears))
	}
	return errors.Join(errs...)
}

func days(d time.Duration) string {
	if d%Day == 0 {
		return fmt.Sprintf("%d days", d/Day)
	}
	return d.String()
}

// ParsePeriod reads an identification period: "<n>d" (days) or a Go
// duration ("4392h").
func ParsePeriod(s string) (time.Duration, error) {
	if n := len(s); n > 1 && s[n-1] == 'd' {
		v, err := strconv.ParseInt(s[:n-1], 10, 64)
		if err != nil || v < 0 || v > 100*366 {
			return 0, fmt.Errorf("%q is not a period (such as 183d or 4392h)", s)
		}
		return time.Duration(v) * Day, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a period (such as 183d or 4392h)", s)
	}
	return d, nil
}

// ParseYears reads a billing records period: "<n>y" or "<n>" whole years.
func ParseYears(s string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSuffix(s, "y"))
	if err != nil || v < 0 || s == "" {
		return 0, fmt.Errorf("%q is not a number of years (such as 8y)", s)
	}
	return v, nil
}

// IdentificationCutoff: tickets whose validity ended before it lose their
// identification data at now.
func (p Policy) IdentificationCutoff(now time.Time) time.Time { return now.Add(-p.Identification) }

// BillingUntil is when the duty of a billing record dated at ends: the end
// of the BillingYears-th calendar year (in loc) after the year of at, as
// § 147 (4) AO counts it.
func (p Policy) BillingUntil(at time.Time, loc *time.Location) time.Time {
	return time.Date(at.In(loc).Year()+1+p.BillingYears, 1, 1, 0, 0, 0, 0, loc).UTC()
}

// BillingCutoff: documents created before it are past their duty at now.
func (p Policy) BillingCutoff(now time.Time, loc *time.Location) time.Time {
	return time.Date(now.In(loc).Year()-p.BillingYears, 1, 1, 0, 0, 0, 0, loc).UTC()
}

// ErasedName is what an erased name reads as; ErasedBirthDate an erased
// birth date (a valid date, so strict decoders do not fail).
const (
	ErasedName      = "erased"
	ErasedBirthDate = "1900-01-01"
)

// NeutralMedium returns the identification medium with every field
// replaced by a neutral value, keeping its option key and field names: the
// SDKs read properties.identification_medium.<option>.first_name and crash
// on a missing key (client-contract.md 3.9).
func NeutralMedium(medium json.RawMessage) json.RawMessage {
	var m map[string]map[string]any
	if err := json.Unmarshal(medium, &m); err != nil || len(m) == 0 {
		return json.RawMessage(`{"photo_id_name_only":{"first_name":"erased","last_name":"erased"}}`)
	}
	for _, fields := range m {
		for k := range fields {
			if k == "birth_date" {
				fields[k] = ErasedBirthDate
			} else {
				fields[k] = ErasedName
			}
		}
	}
	b, _ := json.Marshal(m)
	return b
}

// RedactObject returns a stored JSON object (an event's object, a stored
// response) with every "identification_medium" neutral and every
// "tariff_settings" object null, at any depth; ok is false when nothing
// needed redacting.
func RedactObject(obj []byte) (out []byte, changed bool) {
	var v any
	if err := json.Unmarshal(obj, &v); err != nil {
		return obj, false
	}
	v = redact(v, &changed)
	if !changed {
		return obj, false
	}
	// Without HTML escaping: stored event objects hold part placeholders
	// such as {"<product>":"…"} that must stay byte for byte.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return obj, false
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), true
}

func redact(v any, changed *bool) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			switch {
			case k == "identification_medium" && x != nil:
				b, _ := json.Marshal(x)
				n := NeutralMedium(b)
				if string(n) != string(b) {
					var nv any
					_ = json.Unmarshal(n, &nv)
					t[k] = nv
					*changed = true
				}
			case k == "tariff_settings" && x != nil:
				if _, isObj := x.(map[string]any); isObj {
					t[k] = nil
					*changed = true
				}
			default:
				t[k] = redact(x, changed)
			}
		}
		return t
	case []any:
		for i := range t {
			t[i] = redact(t[i], changed)
		}
		return t
	}
	return v
}

// Due is what the retention job would change at one run: per
// class, how many records and the oldest date among them.
type Due struct {
	Tickets, Coupons, Customers, Events int64
	// OldestTicket is the earliest valid_until of a due ticket; OldestCoupon
	// the earliest creation of a due coupon; OldestCustomer the earliest
	// end of a restriction that has passed. Nil when none is due.
	OldestTicket, OldestCoupon, OldestCustomer *time.Time
	// InvoicesPastPeriod counts documents whose retention period has ended
	// (issued before billingCutoff). They are kept: the job never deletes
	// or alters an issued document.
	InvoicesPastPeriod int64
}

// RecordRef names a stored record of an export or erasure: its type, id
// and the date its retention duty counts from.
type RecordRef struct {
	Type, ID string
	At       time.Time
}

// TicketCursor is where a retention run stands in tickets_retention: the
// (valid_until, id) of the last ticket of its previous batch.
type TicketCursor struct {
	ValidUntil time.Time
	ID         string
}
