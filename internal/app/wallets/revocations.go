package wallets

import (
	"context"
	"strconv"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ticketing"
)

// RevocationFeed is the signed body of GET /v1/inspection/revocations.json.
type RevocationFeed struct {
	Body      []byte // the canonical feed JSON, exactly as signed
	Signature []byte // Ed25519 over barcode.RevocationContext + Body
	KeyID     string
}

// MarshalJSON writes {"feed": <Body>, "signature": {...}}: the signature is
// detached from the bytes it covers, which stay verbatim in "feed".
func (f RevocationFeed) MarshalJSON() ([]byte, error) {
	return barcode.DetachedJSON("feed", f.Body, f.Signature, f.KeyID)
}

// Revocations is the revocation feed after since (0: all), signed with the
// active live inspection key.
func (w *Service) Revocations(ctx context.Context, since int64) (RevocationFeed, error) {
	kr, err := w.feedKeyring("app.Revocations", since)
	if err != nil {
		return RevocationFeed{}, err
	}
	now := w.Clock.Now()
	rs, last, err := w.DB.Read().Revocations(ctx, since, now)
	if err != nil {
		return RevocationFeed{}, err
	}
	feed := barcode.Feed{Version: 1, GeneratedAt: clock.Timestamp(now), Since: since, LastSeq: last, Revocations: make([]barcode.FeedEntry, len(rs))}
	for i, r := range rs {
		feed.Revocations[i] = barcode.FeedEntry{Seq: r.Seq, TicketID: r.TicketID, Kind: r.Kind, Reason: r.Reason,
			RevokedAt: clock.Timestamp(r.RevokedAt), ValidUntil: clock.Timestamp(r.ValidUntil)}
		if r.Kind == ticketing.RevocationKey {
			feed.Revocations[i].Kid = strconv.Itoa(int(r.KeyID))
		}
	}
	body, sig, key, err := barcode.SignFeed(feed, kr)
	if err != nil {
		return RevocationFeed{}, err
	}
	return RevocationFeed{Body: body, Signature: sig, KeyID: key.Kid()}, nil
}
