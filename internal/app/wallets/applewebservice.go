package wallets

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/farebox/farebox/internal/wallet"
	"github.com/farebox/farebox/internal/wallet/apple"
)

// Apple's PassKit web service (docs/wallet.md, "Apple Wallet updates"): a
// device registers the passes it holds, is pushed when one changes, asks
// which changed since its tag and downloads them. The pass's serial number
// is the ticket id it was first built for; it follows its coupon, so a
// subscription's pass shows each new cycle from the cycle's first instant.

// Limits of the web service's inputs.
const (
	MaxAppleLogBody     = 64 << 10 // POST /v1/log
	MaxAppleLogMessages = 100
	MaxAppleLogMessage  = 1000 // characters, longer ones are cut
)

var (
	deviceIDRE  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	pushTokenRE = regexp.MustCompile(`^[0-9A-Fa-f]{16,200}$`)
)

// appleUpdates answers whether passes are built updatable.
func (w *Service) appleUpdates() bool {
	o := w.options()
	return o.Apple != nil && o.AppleWebServiceURL != ""
}

// newPassToken is a fresh authenticationToken: 24 random bytes, 32 characters.
func newPassToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// applePassRecord is the stored record of serial, created on first use.
func (w *Service) applePassRecord(ctx context.Context, serial, couponID string) (wallet.ApplePassRecord, error) {
	rec, ok, err := w.DB.Read().ApplePass(ctx, serial)
	if err != nil || ok {
		return rec, err
	}
	err = w.DB.Write(ctx, func(q Queries) error {
		rec, err = q.EnsureApplePass(ctx, wallet.ApplePassRecord{SerialNumber: serial, CouponID: couponID, AuthToken: newPassToken()}, w.Clock.Now())
		return err
	})
	return rec, err
}

// buildApplePass signs the pass of d; with the web service configured it
// carries webServiceURL, the record's token and serial number.
func (w *Service) buildApplePass(d passes.TicketDetails, op string, rec *wallet.ApplePassRecord) ([]byte, error) {
	b := w.options().Apple
	p, err := w.pass(d, op, b != nil)
	if err != nil {
		return nil, err
	}
	var u apple.Updates
	if rec != nil {
		u = apple.Updates{WebServiceURL: w.options().AppleWebServiceURL, AuthenticationToken: rec.AuthToken, SerialNumber: rec.SerialNumber}
	}
	out, err := b.BuildWith(p, u)
	if err != nil {
		return nil, apperr.E(op, apperr.Unavailable, CodePassUnavailable, "the pass could not be signed").WithCause(err)
	}
	return out, nil
}

// notAuthorized is the one answer to a bad, missing or unknown token and
// an unknown serial number: nothing tells them apart.
func notAuthorized(op string) error {
	return apperr.E(op, apperr.Unauthenticated, CodeApplePassUnauthorized,
		`Authorization must be "ApplePass <authenticationToken>" of this pass`)
}

// applePassType refuses a pass type identifier other than the service's.
func (w *Service) applePassType(op, passType string) error {
	if !w.appleUpdates() {
		// Without the web service configured no pass names it: no such resource.
		return apperr.E(op, apperr.NotFound, CodeApplePassTypeUnknown, "this service issues no updatable Apple passes")
	}
	if passType != w.options().Apple.PassTypeID() {
		return apperr.E(op, apperr.NotFound, CodeApplePassTypeUnknown, "this service issues no passes of type "+strconv.Quote(passType))
	}
	return nil
}

// authorizedPass checks the pass type and the token and returns the record.
func (w *Service) authorizedPass(ctx context.Context, op, passType, serial, token string) (wallet.ApplePassRecord, error) {
	if err := w.applePassType(op, passType); err != nil {
		return wallet.ApplePassRecord{}, err
	}
	if token == "" || len(serial) > 200 || len(token) > 200 {
		return wallet.ApplePassRecord{}, notAuthorized(op)
	}
	rec, ok, err := w.DB.Read().ApplePass(ctx, serial)
	if err != nil {
		return rec, err
	}
	if !ok || subtle.ConstantTimeCompare([]byte(rec.AuthToken), []byte(token)) != 1 {
		return wallet.ApplePassRecord{}, notAuthorized(op)
	}
	return rec, nil
}

func checkDeviceID(op, device string) error {
	if !deviceIDRE.MatchString(device) {
		return apperr.E(op, apperr.Invalid, CodeInvalidDeviceID, "deviceLibraryIdentifier: 1 to 128 letters, digits, '.', '_' or '-'").
			WithDetails(apperr.FieldError{Field: "deviceLibraryIdentifier", Message: "1 to 128 letters, digits, '.', '_' or '-'"})
	}
	return nil
}

// AppleRegistration is POST …/devices/{device}/registrations/{type}/{serial}.
type AppleRegistration struct {
	Device, PassType, Serial, Token string
	PushToken                       string // the body's pushToken
}

// RegisterAppleDevice registers a device for a pass's pushes; created is
// false when it was registered already (its push token is updated).
func (w *Service) RegisterAppleDevice(ctx context.Context, claim idempotency.Claim, r AppleRegistration) (created bool, err error) {
	const op = "app.RegisterAppleDevice"
	if _, err := w.authorizedPass(ctx, op, r.PassType, r.Serial, r.Token); err != nil {
		return false, err
	}
	if err := checkDeviceID(op, r.Device); err != nil {
		return false, err
	}
	if !pushTokenRE.MatchString(r.PushToken) {
		return false, apperr.E(op, apperr.Invalid, CodeInvalidPushToken, `body must be {"pushToken": "<the device's APNs token, hexadecimal>"}`).
			WithDetails(apperr.FieldError{Field: "/pushToken", Message: "16 to 200 hexadecimal digits"})
	}
	err = w.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		created, err = q.RegisterAppleDevice(ctx, r.Device, r.Serial, r.PushToken, w.Clock.Now())
		return err
	})
	return created, err
}

// UnregisterAppleDevice ends a device's registration for a pass; an
// unknown registration is no error (the device forgot it anyway).
func (w *Service) UnregisterAppleDevice(ctx context.Context, claim idempotency.Claim, device, passType, serial, token string) error {
	const op = "app.UnregisterAppleDevice"
	if _, err := w.authorizedPass(ctx, op, passType, serial, token); err != nil {
		return err
	}
	if err := checkDeviceID(op, device); err != nil {
		return err
	}
	return w.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		_, err := q.UnregisterAppleDevice(ctx, device, serial)
		return err
	})
}

// AppleSerials is the answer to GET …/devices/{device}/registrations/{type}.
type AppleSerials struct {
	SerialNumbers []string `json:"serialNumbers"`
	LastUpdated   string   `json:"lastUpdated"`
}

// UpdatedAppleSerials lists the serial numbers of the device's passes
// updated after the tag since ("" = all); ok is false when none was (204).
// The device library identifier is the credential of this call.
func (w *Service) UpdatedAppleSerials(ctx context.Context, device, passType, since string) (s AppleSerials, ok bool, err error) {
	const op = "app.UpdatedAppleSerials"
	if err := w.applePassType(op, passType); err != nil {
		return s, false, err
	}
	if err := checkDeviceID(op, device); err != nil {
		return s, false, err
	}
	// A tag is one this service returned: a canonical decimal number not
	// above the newest tag issued (a larger one would hide every update up
	// to it from the device; docs/wallet.md says 400).
	q := w.DB.Read()
	var tag int64
	if since != "" {
		last, err := q.ApplePassLastTag(ctx)
		if err != nil {
			return s, false, err
		}
		tag, err = strconv.ParseInt(since, 10, 64)
		if err != nil || tag < 0 || strconv.FormatInt(tag, 10) != since || tag > last {
			return s, false, apperr.Param("query", "passesUpdatedSince", "passesUpdatedSince must be a lastUpdated tag this service returned")
		}
	}
	passes, err := q.AppleDevicePasses(ctx, device)
	if err != nil {
		return s, false, err
	}
	var last int64
	s.SerialNumbers = []string{}
	for serial, seq := range passes {
		last = max(last, seq)
		if since == "" || seq > tag {
			s.SerialNumbers = append(s.SerialNumbers, serial)
		}
	}
	slices.Sort(s.SerialNumbers)
	s.LastUpdated = strconv.FormatInt(last, 10)
	return s, len(s.SerialNumbers) > 0, nil
}

// ApplePassRequest is GET …/passes/{type}/{serial} with its conditions.
type ApplePassRequest struct {
	PassType, Serial, Token string
	// IfNoneMatch is the If-None-Match header ("" when absent); it takes
	// precedence over IfModifiedSince (RFC 9110 13.2.2).
	IfNoneMatch string
	// IfModifiedSince is the parsed If-Modified-Since (zero when absent or
	// unreadable).
	IfModifiedSince time.Time
}

// ApplePassAnswer is the pass as it is now, its validators, or
// NotModified (then Pass is nil).
type ApplePassAnswer struct {
	Pass         []byte
	ETag         string    // strong entity tag of what the pass shows
	LastModified time.Time // whole seconds, never after the answer's time
	NotModified  bool
}

// LastModifiedMargin is how long after a change Last-Modified-based
// revalidation waits before it may answer 304: longer than a change's
// commit takes after it read its time. Last-Modified has whole seconds,
// so a change in the same second as a device's last download would
// otherwise look "not modified" (issue 28).
const LastModifiedMargin = 2 * time.Second

// LatestApplePass is GET …/passes/{type}/{serial}: the pass as it is now
// with its validators, or NotModified.
//
// The entity tag is the validator: it names the pass's update tag and a
// digest of everything the pass shows that can change (its current ticket,
// that ticket's validity, invalidation and signing key), so any change,
// even in the same second and before its update job ran, gives another
// tag. If-None-Match is compared with it (weakly, RFC 9110 13.1.2) and
// If-Modified-Since is then ignored.
//
// For a client that sends only If-Modified-Since, the pass counts as
// modified at S = its last change + LastModifiedMargin, rounded up to the
// second: 304 only when S is not after the date sent (and the date is not
// in the future). Last-Modified is S once S has passed, else the answer's
// own second (older than S, so the next request is answered 200): a change
// committed after a download always has its S after that download's
// Last-Modified, whatever second it falls in.
func (w *Service) LatestApplePass(ctx context.Context, r ApplePassRequest) (ApplePassAnswer, error) {
	const op = "app.LatestApplePass"
	rec, err := w.authorizedPass(ctx, op, r.PassType, r.Serial, r.Token)
	if err != nil {
		return ApplePassAnswer{}, err
	}
	cur, err := w.currentTicket(ctx, rec)
	if err != nil {
		return ApplePassAnswer{}, err
	}
	modified := rec.UpdatedAt
	if cur.ID != rec.SerialNumber && cur.ValidFrom.After(modified) {
		modified = cur.ValidFrom
	}
	if cur.InvalidatedAt != nil && cur.InvalidatedAt.After(modified) {
		modified = *cur.InvalidatedAt
	}
	now := w.Clock.Now().UTC()
	stable := ceilSecond(modified.Add(LastModifiedMargin))
	a := ApplePassAnswer{ETag: applePassETag(rec, cur), LastModified: stable}
	if stable.After(now) {
		a.LastModified = now.Truncate(time.Second)
	}
	if r.IfNoneMatch != "" {
		a.NotModified = etagMatches(r.IfNoneMatch, a.ETag)
	} else if ims := r.IfModifiedSince; !ims.IsZero() && !ims.After(now) {
		a.NotModified = !stable.After(ims)
	}
	if a.NotModified {
		return a, nil
	}
	d, err := w.ticket(ctx, cur.ID)
	if err != nil {
		return ApplePassAnswer{}, err
	}
	a.Pass, err = w.buildApplePass(d, op, &rec)
	return a, err
}

// ceilSecond rounds t up to a whole second.
func ceilSecond(t time.Time) time.Time {
	if f := t.Truncate(time.Second); !f.Equal(t) {
		return f.Add(time.Second)
	}
	return t
}

// applePassETag is the strong entity tag of what pass rec shows with cur
// as its current ticket: the update tag, then a digest of the ticket's
// id, validity, invalidation and signing key (a change that has not been
// tagged yet still changes the digest).
func applePassETag(rec wallet.ApplePassRecord, cur ticketing.Ticket) string {
	h := sha256.New()
	inv := int64(0)
	if cur.InvalidatedAt != nil {
		inv = cur.InvalidatedAt.UnixNano()
	}
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00%d\x00%d\x00%d\x00%d", rec.SerialNumber, rec.UpdateSeq, cur.ID,
		cur.ValidFrom.UnixNano(), cur.ValidUntil.UnixNano(), inv, cur.InspectionKeyID)
	return fmt.Sprintf(`"%d-%x"`, rec.UpdateSeq, h.Sum(nil)[:12])
}

// etagMatches reports whether the If-None-Match value header names etag:
// "*", or one of its comma-separated tags under the weak comparison (a
// W/ prefix is ignored).
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// currentTicket is the ticket the pass rec shows now: its own, or, while
// its own is valid, the coupon's latest ticket that has started (a
// subscription's next cycle from its first instant; voided when that one
// was revoked).
func (w *Service) currentTicket(ctx context.Context, rec wallet.ApplePassRecord) (ticketing.Ticket, error) {
	ts, err := w.DB.Read().TicketsOfCoupon(ctx, rec.CouponID)
	if err != nil {
		return ticketing.Ticket{}, err
	}
	var cur *ticketing.Ticket
	for i := range ts {
		if ts[i].ID == rec.SerialNumber {
			cur = &ts[i]
		}
	}
	if cur == nil {
		return ticketing.Ticket{}, notAuthorized("app.LatestApplePass")
	}
	if cur.InvalidatedAt != nil {
		return *cur, nil
	}
	if len(ts) == 1 {
		return *cur, nil
	}
	// "Started" on the coupon's time: its test clock's, if it has one
	// (docs/test-clocks.md), so an advanced clock moves the pass.
	q := w.DB.Read()
	c, err := q.Coupon(ctx, rec.CouponID)
	if err != nil {
		return ticketing.Ticket{}, err
	}
	now := w.Clock.Now()
	if c.TestClockID != nil {
		if now, err = q.TestClockTime(ctx, *c.TestClockID); err != nil {
			return ticketing.Ticket{}, err
		}
	}
	out := *cur
	for _, t := range ts {
		if !t.ValidFrom.After(now) && t.ValidFrom.After(out.ValidFrom) {
			out = t
		}
	}
	return out, nil
}

// AppleLog records the messages a device sends to POST …/v1/log (errors
// Wallet met with our passes), cut to bounds, into the app's log.
func (w *Service) AppleLog(logs []string) (int, error) {
	const op = "app.AppleLog"
	if logs == nil {
		return 0, apperr.E(op, apperr.Invalid, CodeInvalidAppleLog, `body must be {"logs": ["message", …]}`).
			WithDetails(apperr.FieldError{Field: "/logs", Message: "an array of strings"})
	}
	if len(logs) > MaxAppleLogMessages {
		logs = logs[:MaxAppleLogMessages]
	}
	for _, m := range logs {
		if utf8.RuneCountInString(m) > MaxAppleLogMessage {
			m = string([]rune(m)[:MaxAppleLogMessage])
		}
		w.o.Log.Warn("Apple Wallet device log", "message", m)
	}
	return len(logs), nil
}
