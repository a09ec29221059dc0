package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/records"
)

// inspectPost is how `farebox inspect` posts its verdict as an inspection
// record (--post; docs/records.md).
type inspectPost struct {
	url, token, stopID, position *string
}

func postFlags(fs *flag.FlagSet, getenv func(string) string) inspectPost {
	return inspectPost{
		url:      fs.String("post", "", "post the verdict as an inspection record to this URL (the service's /v1/inspection/records.json)"),
		token:    fs.String("inspector-token", getenv("FAREBOX_INSPECTOR_TOKEN"), "the inspection device's token for --post (env FAREBOX_INSPECTOR_TOKEN)"),
		stopID:   fs.String("stop-id", "", "where the check was made: a stop id (GTFS stop_id or DHID), for --post"),
		position: fs.String("position", "", "where the check was made: LAT,LON in degrees, for --post"),
	}
}

// outcome is the inspection record's outcome of rep.
func outcome(rep barcode.Report, allowTest bool) string {
	switch {
	case rep.Revoked != nil && rep.Revoked.Kind == "restored":
		return records.OutcomeReplaced
	case rep.Revoked != nil:
		return records.OutcomeRevoked
	case rep.Genuine && rep.Test && !allowTest:
		return records.OutcomeTest
	}
	return rep.State // valid, not_yet_valid, expired or not_genuine
}

// send posts the verdict when --post is set; the record id is also the
// Idempotency-Key, so a retry of the same post stores it once.
func (p inspectPost) send(ctx context.Context, rep barcode.Report, payload []byte, allowTest bool, at time.Time, stdout io.Writer) error {
	if *p.url == "" {
		return nil
	}
	if *p.token == "" {
		return fmt.Errorf("--post needs --inspector-token (or FAREBOX_INSPECTOR_TOKEN)")
	}
	sum := sha256.Sum256(payload)
	rec := map[string]any{"record_id": uuid.NewString(), "outcome": outcome(rep, allowTest), "barcode_sha256": hex.EncodeToString(sum[:]),
		"checked_at": clock.Timestamp(at), "device_time": clock.Timestamp(time.Now())}
	if rep.Genuine && rep.Claims.TicketID != "" {
		rec["ticket_id"] = rep.Claims.TicketID
	}
	place, err := p.place()
	if err != nil {
		return err
	}
	if place != nil {
		rec["place"] = place
	}
	body, _ := json.Marshal(map[string]any{"records": []any{rec}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, *p.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("--post: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+*p.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", rec["record_id"].(string))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("--post: %w", err)
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("--post %s: %s: %s", *p.url, res.Status, strings.TrimSpace(string(answer)))
	}
	fmt.Fprintf(stdout, "POSTED as inspection record %s (%s)\n", rec["record_id"], rec["outcome"])
	return nil
}

// place is the record's place from --stop-id and --position; nil when neither.
func (p inspectPost) place() (map[string]any, error) {
	place := map[string]any{}
	if *p.stopID != "" {
		place["stop_id"] = *p.stopID
	}
	if *p.position != "" {
		la, lo, ok := strings.Cut(*p.position, ",")
		lat, err1 := strconv.ParseFloat(strings.TrimSpace(la), 64)
		lon, err2 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("--position: %q is not LAT,LON", *p.position)
		}
		place["lat"], place["lon"] = lat, lon
	}
	if len(place) == 0 {
		return nil, nil
	}
	return place, nil
}
