package records

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"filippo.io/age"

	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/records"
)

// ExportFormat names the layout of the decrypted export (docs/records.md).
const ExportFormat = "farebox-records/1"

// Export kinds.
const (
	KindAll        = "all"
	KindIssuance   = "issuance"
	KindInspection = "inspection"
)

// ExportRequest is one day's export.
type ExportRequest struct {
	Day  string // YYYY-MM-DD, a calendar day in Europe/Berlin
	Kind string // KindAll (""), KindIssuance or KindInspection
	// Recipients are the reporting system's age recipients ("age1…", one
	// or more, separated by white space or lines; # starts a comment).
	Recipients string
	// Pseudonyms make the traveller's pseudonym under the seller's key.
	Pseudonyms *records.Pseudonymizer
}

// Export is the decrypted export: one JSON document per day.
type Export struct {
	Format         string             `json:"format"`
	Day            string             `json:"day"`
	TimeZone       string             `json:"time_zone"`
	From           kit.Timestamp      `json:"from"`
	Until          kit.Timestamp      `json:"until"`
	GeneratedAt    kit.Timestamp      `json:"generated_at"`
	PseudonymKeyID string             `json:"pseudonym_key_id"`
	Issuance       []IssuanceRecord   `json:"issuance"`
	Inspections    []InspectionRecord `json:"inspections"`
}

// IssuanceRecord is one issued ticket in the export.
type IssuanceRecord struct {
	TicketID           string         `json:"ticket_id"`
	SellerAccountID    string         `json:"seller_account_id"`
	ProductID          string         `json:"product_id"`
	ProductName        string         `json:"product_name"`
	TicketType         string         `json:"ticket_type"`
	CustomerType       string         `json:"customer_type"`
	BarcodeProfile     string         `json:"barcode_profile"`
	ValidFrom          kit.Timestamp  `json:"valid_from"`
	ValidUntil         kit.Timestamp  `json:"valid_until"`
	IssuedAt           kit.Timestamp  `json:"issued_at"`
	InvalidatedAt      *kit.Timestamp `json:"invalidated_at"`
	TravellerPseudonym *string        `json:"traveller_pseudonym"`
}

// InspectionRecord is one posted check in the export.
type InspectionRecord struct {
	ID            string         `json:"id"`
	InspectorID   string         `json:"inspector_id"`
	RecordID      string         `json:"record_id"`
	TicketID      *string        `json:"ticket_id"`
	BarcodeSHA256 *string        `json:"barcode_sha256"`
	Outcome       string         `json:"outcome"`
	CheckedAt     kit.Timestamp  `json:"checked_at"`
	DeviceTime    *kit.Timestamp `json:"device_time"`
	ReceivedAt    kit.Timestamp  `json:"received_at"`
	Lat           *float64       `json:"lat"`
	Lon           *float64       `json:"lon"`
	StopID        *string        `json:"stop_id"`
}

// ExportSummary says what an export wrote.
type ExportSummary struct {
	Day         string
	Issuance    int
	Inspections int
}

// ParseDay reads a YYYY-MM-DD export day and returns its bounds in
// Europe/Berlin (a day of 23 or 25 hours at the clock changes).
func ParseDay(day string) (from, to time.Time, err error) {
	d, err := time.ParseInLocation("2006-01-02", day, clock.Berlin)
	if err != nil {
		return from, to, apperr.Param("records.Export", "day", "the day is YYYY-MM-DD")
	}
	return d.UTC(), d.AddDate(0, 0, 1).UTC(), nil
}

// ParseRecipients reads age recipients (X25519 "age1…" or SSH public
// keys); at least one.
func ParseRecipients(text string) ([]age.Recipient, error) {
	rs, err := age.ParseRecipients(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("records: recipient: %w", err)
	}
	return rs, nil
}

// Export writes the day's records, pseudonymised, as one JSON document
// encrypted to the recipients with age (docs/records.md). The issuance
// records are read from the tickets issued that day (live environment);
// the inspection records are those received that day.
func (s *Service) Export(ctx context.Context, req ExportRequest, w io.Writer) (ExportSummary, error) {
	doc, err := s.ExportDocument(ctx, req)
	if err != nil {
		return ExportSummary{}, err
	}
	rs, err := ParseRecipients(req.Recipients)
	if err != nil {
		return ExportSummary{}, err
	}
	bw := bufio.NewWriter(w)
	enc, err := age.Encrypt(bw, rs...)
	if err != nil {
		return ExportSummary{}, fmt.Errorf("records: encrypt: %w", err)
	}
	if err := json.NewEncoder(enc).Encode(doc); err != nil {
		return ExportSummary{}, err
	}
	if err := enc.Close(); err != nil {
		return ExportSummary{}, err
	}
	return ExportSummary{Day: doc.Day, Issuance: len(doc.Issuance), Inspections: len(doc.Inspections)}, bw.Flush()
}

// ExportDocument is the day's export before encryption.
func (s *Service) ExportDocument(ctx context.Context, req ExportRequest) (Export, error) {
	from, to, err := ParseDay(req.Day)
	if err != nil {
		return Export{}, err
	}
	kind := req.Kind
	if kind == "" {
		kind = KindAll
	}
	if kind != KindAll && kind != KindIssuance && kind != KindInspection {
		return Export{}, apperr.Param("records.Export", "kind", "the kind is issuance, inspection or all")
	}
	if req.Pseudonyms == nil {
		return Export{}, fmt.Errorf("records: no pseudonym key")
	}
	doc := Export{Format: ExportFormat, Day: req.Day, TimeZone: clock.Berlin.String(), From: kit.Timestamp(from), Until: kit.Timestamp(to),
		GeneratedAt: kit.Timestamp(s.Clock.Now()), PseudonymKeyID: req.Pseudonyms.KeyID,
		Issuance: []IssuanceRecord{}, Inspections: []InspectionRecord{}}
	q := s.DB.Read()
	if kind != KindInspection {
		if doc.Issuance, err = s.issuance(ctx, q, from, to, req.Pseudonyms); err != nil {
			return Export{}, err
		}
	}
	if kind != KindIssuance {
		ins, err := q.InspectionsReceived(ctx, from, to)
		if err != nil {
			return Export{}, err
		}
		for _, r := range ins {
			doc.Inspections = append(doc.Inspections, InspectionRecord{ID: r.ID, InspectorID: r.InspectorID, RecordID: r.ClientRecordID,
				TicketID: optional(r.TicketID), BarcodeSHA256: optional(r.BarcodeSHA256), Outcome: r.Outcome,
				CheckedAt: kit.Timestamp(r.CheckedAt), DeviceTime: kit.TimestampPtr(r.DeviceTime), ReceivedAt: kit.Timestamp(r.ReceivedAt),
				Lat: r.Lat, Lon: r.Lon, StopID: optional(r.StopID)})
		}
	}
	return doc, nil
}

func (s *Service) issuance(ctx context.Context, q Queries, from, to time.Time, p *records.Pseudonymizer) ([]IssuanceRecord, error) {
	cat, _, err := q.LoadCatalog(ctx)
	if err != nil {
		return nil, err
	}
	issued, err := q.IssuedLive(ctx, from, to)
	if err != nil {
		return nil, err
	}
	products := make(map[string]*catalog.Product, len(cat.Products))
	for i := range cat.Products {
		products[cat.Products[i].ID] = &cat.Products[i]
	}
	out := make([]IssuanceRecord, 0, len(issued))
	for _, t := range issued {
		r := IssuanceRecord{TicketID: t.TicketID, SellerAccountID: t.AccountID, ProductID: t.ProductID,
			ValidFrom: kit.Timestamp(t.ValidFrom), ValidUntil: kit.Timestamp(t.ValidUntil), IssuedAt: kit.Timestamp(t.IssuedAt),
			InvalidatedAt: kit.TimestampPtr(t.Invalidated), BarcodeProfile: catalog.BarcodeFarebox}
		if pr := products[t.ProductID]; pr != nil {
			r.ProductName, r.TicketType, r.CustomerType, r.BarcodeProfile = pr.LocalTicketName, pr.TicketType, pr.CustomerType, pr.Barcode()
		}
		if !t.Erased {
			r.TravellerPseudonym = optional(p.Of(t.Medium))
		}
		out = append(out, r)
	}
	return out, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
