package wallets

import (
	"context"
	"encoding/base64"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/blocklist"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ticketing"
)

// Pages of the exported blocklist: entries per page unless asked
// otherwise, and the most a page holds.
const (
	BlocklistPage    = 1000
	MaxBlocklistPage = 10000
)

// SignedBlocklist is an exported blocklist: Body is the list's JSON
// exactly as signed (Ed25519 over blocklist.Context + Body).
type SignedBlocklist struct {
	Body      []byte
	Signature []byte
	KeyID     string
}

// MarshalJSON writes {"blocklist": <Body>, "signature": {...}}.
func (b SignedBlocklist) MarshalJSON() ([]byte, error) {
	return barcode.DetachedJSON("blocklist", b.Body, b.Signature, b.KeyID)
}

// MovedReason is the reason of a devices entry.
const MovedReason = "replaced: the ticket moved to another phone"

// deviceEntry is the blocklist entry of moved-away key m.
func deviceEntry(m ticketing.DeviceMove) blocklist.DeviceEntry {
	key, _ := base64.RawURLEncoding.DecodeString(m.Key) // devices.ParseKey stored it canonical
	return blocklist.DeviceEntry{Seq: m.Seq, TicketID: m.TicketID, DeviceKeySHA256: blocklist.DeviceDigest(m.TicketID, key),
		MovedAt: clock.Timestamp(m.MovedAt), Reason: MovedReason, ValidUntil: clock.Timestamp(m.ValidUntil)}
}

// blockRevoked adds the VDV or UIC entry of revocation r to l, if any.
func blockRevoked(l *blocklist.List, r ticketing.RevokedTicket, rics, org int) {
	reason, until := r.Kind+": "+r.Reason, clock.Timestamp(r.ValidUntil)
	switch {
	case r.Kind == ticketing.RevocationKey:
	case r.Barcode == catalog.BarcodeVDV:
		n := r.VDVNumber
		if n == 0 {
			n = vdv.TicketNumber(r.TicketID) // issued before the counter (docs/barcodes.md)
		}
		l.VDV = append(l.VDV, blocklist.VDVEntry{Seq: r.Seq, Org: org, Number: n, Instance: n,
			Target: blocklist.TargetTicket, Lock: blocklist.LockReject, Reason: reason, ValidUntil: until})
	case r.Barcode == catalog.BarcodeUIC:
		l.UIC = append(l.UIC, blocklist.UICEntry{Seq: r.Seq, RICS: rics, TicketNumber: blocklist.UICTicketNumber(r.TicketID),
			Reference: r.TicketID, Reason: reason, ValidUntil: until})
	}
}

// Blocklist is the signed blocklist of GET /v1/inspection/blocklist.json
// and `farebox blocklist export` (docs/blocklist.md): the revocation
// feed's entries after since, at most limit (0: BlocklistPage), as the
// VDV-KA entries of the tickets of vdv-ka-static products and the UIC
// entries of those of uic-918-3-uflex products, and the devices entries
// of the phones dynamic tickets moved away from, signed like the feed.
// Entries of farebox-profile tickets and of revoked inspection keys have
// no place in either list (the inspection keys sign neither a UIC nor a
// VDV barcode); the cursor passes them all the same.
func (w *Service) Blocklist(ctx context.Context, since int64, limit int) (SignedBlocklist, error) {
	kr, err := w.feedKeyring("wallets.Blocklist", since)
	if err != nil {
		return SignedBlocklist{}, err
	}
	if limit == 0 {
		limit = BlocklistPage
	}
	if limit < 1 || limit > MaxBlocklistPage {
		return SignedBlocklist{}, apperr.Param("query", "limit", "limit must be 1 to 10000 entries")
	}
	uicIss, err := w.o.UIC()
	if err != nil {
		return SignedBlocklist{}, err
	}
	vdvIss, err := w.o.VDV()
	if err != nil {
		return SignedBlocklist{}, err
	}
	now := w.Clock.Now()
	rs, last, err := w.DB.Read().BlocklistRevocations(ctx, since, limit, now)
	if err != nil {
		return SignedBlocklist{}, err
	}
	ms, err := w.DB.Read().BlocklistDeviceMoves(ctx, since, last, limit, now)
	if err != nil {
		return SignedBlocklist{}, err
	}
	l := blocklist.List{Issuer: w.o.Brand.Organization, GeneratedAt: clock.Timestamp(now), Since: since, LastSeq: last}
	// Revocations and moves share the feed's numbering: the page is the
	// first limit of both in order.
	i, j := 0, 0
	for n := 0; n < limit && (i < len(rs) || j < len(ms)); n++ {
		if j == len(ms) || (i < len(rs) && rs[i].Seq < ms[j].Seq) {
			blockRevoked(&l, rs[i], uicIss.RICS, vdvIss.Org)
			l.LastSeq, i = rs[i].Seq, i+1
		} else {
			l.Devices = append(l.Devices, deviceEntry(ms[j]))
			l.LastSeq, j = ms[j].Seq, j+1
		}
	}
	if len(rs) == limit || len(ms) == limit || len(rs)+len(ms) > limit {
		l.More = l.LastSeq < last
	} else {
		l.LastSeq = last
	}
	body, sig, kid, err := blocklist.Sign(l, kr)
	return SignedBlocklist{Body: body, Signature: sig, KeyID: kid}, err
}
