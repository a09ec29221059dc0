package records

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/records"
)

// MaxBodyBytes bounds a posted batch's body (the transport applies it).
const MaxBodyBytes = records.MaxBodyBytes

// BatchRequest is POST /v1/inspection/records.json's body, as sent.
type BatchRequest struct {
	Records []RecordRequest `json:"records"`
}

// RecordRequest is one check in a batch.
type RecordRequest struct {
	RecordID      string        `json:"record_id"`
	TicketID      *string       `json:"ticket_id"`
	BarcodeSHA256 *string       `json:"barcode_sha256"`
	Outcome       string        `json:"outcome"`
	CheckedAt     string        `json:"checked_at"`
	DeviceTime    *string       `json:"device_time"`
	Place         *PlaceRequest `json:"place"`
}

// PlaceRequest is where a check was made: a position, a stop id, both or neither.
type PlaceRequest struct {
	Lat    *float64 `json:"lat"`
	Lon    *float64 `json:"lon"`
	StopID *string  `json:"stop_id"`
}

// BatchResponse is the answer to a batch: each record's stored id, and
// whether it was stored before (a repeat of the same record_id).
type BatchResponse struct {
	Object     string           `json:"object"`
	Received   int              `json:"received"`
	Created    int              `json:"created"`
	Duplicates int              `json:"duplicates"`
	Records    []RecordResponse `json:"records"`
}

// RecordResponse is one record of a BatchResponse.
type RecordResponse struct {
	RecordID  string `json:"record_id"`
	ID        string `json:"id"`
	Duplicate bool   `json:"duplicate"`
}

// Post stores a device's batch of checks in one transaction: all or none.
// A record_id the device posted before is not stored again (its answer
// says duplicate), so a batch resent after a lost answer is harmless. A
// bad record refuses the batch with a 400 naming its field; the answer
// carries nothing of the tickets (an inspector learns nothing beyond what
// the barcode showed).
func (s *Service) Post(ctx context.Context, claim idempotency.Claim, dev Device, req BatchRequest) (BatchResponse, error) {
	now := s.Clock.Now()
	rs, err := validBatch(req, dev.InspectorID, now)
	if err != nil {
		return BatchResponse{}, err
	}
	for i := range rs {
		rs[i].ID = s.IDs.New("inspection")
	}
	var ids []string
	var created []bool
	err = s.DB.WriteClaimed(ctx, claim, func(q Queries) (err error) {
		ids, created, err = q.InsertInspections(ctx, rs)
		return err
	})
	if err != nil {
		return BatchResponse{}, err
	}
	out := BatchResponse{Object: "inspection_batch", Received: len(rs), Records: make([]RecordResponse, len(rs))}
	for i, r := range rs {
		out.Records[i] = RecordResponse{RecordID: r.ClientRecordID, ID: ids[i], Duplicate: !created[i]}
		if created[i] {
			out.Created++
		} else {
			out.Duplicates++
		}
	}
	return out, nil
}

func validBatch(req BatchRequest, inspector string, now time.Time) ([]records.Inspection, error) {
	const op = "records.Post"
	if len(req.Records) == 0 {
		return nil, fieldErr(op, CodeInvalidInspectionRecord, "/records", "records must hold 1 to 500 checks")
	}
	if len(req.Records) > records.MaxBatch {
		return nil, apperr.E(op, apperr.TooLarge, CodeInspectionBatchTooLarge,
			fmt.Sprintf("a batch holds at most %d records; post the rest in another batch", records.MaxBatch)).
			WithDetails(apperr.FieldError{Field: "/records", Message: fmt.Sprintf("%d records", len(req.Records))})
	}
	seen := make(map[string]bool, len(req.Records))
	out := make([]records.Inspection, 0, len(req.Records))
	for i, r := range req.Records {
		rec, err := validRecord(op, fmt.Sprintf("/records/%d", i), r, now)
		if err != nil {
			return nil, err
		}
		if seen[rec.ClientRecordID] {
			return nil, fieldErr(op, CodeInvalidInspectionRecord, fmt.Sprintf("/records/%d/record_id", i), "record_id appears twice in the batch")
		}
		seen[rec.ClientRecordID] = true
		rec.InspectorID, rec.ReceivedAt = inspector, now
		out = append(out, rec)
	}
	return out, nil
}

func validRecord(op, at string, r RecordRequest, now time.Time) (records.Inspection, error) {
	bad := func(field, msg string) (records.Inspection, error) {
		return records.Inspection{}, fieldErr(op, CodeInvalidInspectionRecord, at+"/"+field, msg)
	}
	rec := records.Inspection{ClientRecordID: r.RecordID, Outcome: r.Outcome}
	if !token(r.RecordID, records.MaxRecordID) {
		return bad("record_id", "record_id is 1 to 128 printable ASCII characters, unique per device (a UUID)")
	}
	if !records.KnownOutcome(r.Outcome) {
		return records.Inspection{}, fieldErr(op, CodeUnknownOutcome, at+"/outcome",
			"outcome must be one of "+strings.Join(records.Outcomes, ", "))
	}
	if r.TicketID != nil {
		if !token(*r.TicketID, records.MaxTicketID) {
			return bad("ticket_id", "ticket_id is 1 to 128 printable ASCII characters (the id the barcode carries)")
		}
		rec.TicketID = *r.TicketID
	}
	if r.BarcodeSHA256 != nil {
		if !hexDigest(*r.BarcodeSHA256) {
			return bad("barcode_sha256", "barcode_sha256 is the SHA-256 of the barcode's payload in 64 lower-case hex digits")
		}
		rec.BarcodeSHA256 = *r.BarcodeSHA256
	}
	if rec.TicketID == "" && rec.BarcodeSHA256 == "" && r.Outcome != records.OutcomeUnreadable {
		return bad("ticket_id", "a check names its ticket_id or barcode_sha256 (only an unreadable code has neither)")
	}
	t, err := clock.ParseTimestamp(r.CheckedAt)
	if err != nil {
		return bad("checked_at", "checked_at is an RFC 3339 time")
	}
	if t.After(now.Add(records.MaxClockSkew)) || t.Before(now.Add(-records.MaxAge)) {
		return bad("checked_at", "checked_at lies more than 10 minutes ahead of the service's clock or more than 60 days back")
	}
	rec.CheckedAt = t.Truncate(time.Second)
	if r.DeviceTime != nil {
		d, err := clock.ParseTimestamp(*r.DeviceTime)
		if err != nil || d.Year() < 2000 || d.Year() > 9999 {
			return bad("device_time", "device_time is an RFC 3339 time (the device's clock when it posted)")
		}
		d = d.Truncate(time.Second)
		rec.DeviceTime = &d
	}
	if p := r.Place; p != nil {
		if (p.Lat == nil) != (p.Lon == nil) {
			return bad("place", "place has both lat and lon or neither")
		}
		if p.Lat != nil {
			if !finiteIn(*p.Lat, 90) {
				return bad("place/lat", "lat is a latitude in degrees, -90 to 90")
			}
			if !finiteIn(*p.Lon, 180) {
				return bad("place/lon", "lon is a longitude in degrees, -180 to 180")
			}
			lat, lon := *p.Lat, *p.Lon
			rec.Lat, rec.Lon = &lat, &lon
		}
		if p.StopID != nil {
			if !token(*p.StopID, records.MaxStopID) && !(len(*p.StopID) <= records.MaxStopID && printableText(*p.StopID)) {
				return bad("place/stop_id", "stop_id is 1 to 128 characters (a GTFS stop_id or a DHID such as de:11000:900100001)")
			}
			rec.StopID = *p.StopID
		}
	}
	return rec, nil
}

func fieldErr(op, code, field, msg string) error {
	return apperr.E(op, apperr.Invalid, code, msg).WithDetails(apperr.FieldError{Field: field, Message: msg})
}

// token: 1 to max printable ASCII characters.
func token(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// printableText: non-empty, no control characters (a stop id may hold spaces).
func printableText(s string) bool {
	if strings.TrimSpace(s) == "" {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func hexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

func finiteIn(v, bound float64) bool { return !math.IsNaN(v) && v >= -bound && v <= bound }
