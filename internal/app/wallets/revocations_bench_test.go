package wallets_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/ticketing"
)

// BenchmarkRevocationFeed: a feed of 100,000 entries (revocations spread
// over 30 days, ticket ids with random UUIDs as ident makes them, so the
// gzip size is that of real ids; one entry is a revoked key), served and
// verified as a device does it: from empty (since=0) and from yesterday
// (the last 1/30 of the entries). Reports the body size per sync, plain
// and gzip-compressed as the endpoint sends it.
func BenchmarkRevocationFeed(b *testing.B) {
	const entries = 100_000
	storetest.EachEngineBench(b, func(b *testing.B, engine store.Engine) {
		clk := clocktest.NewFixed(start)
		s := storetest.OpenWith(b, engine, func(o *store.Options) { o.Clock = clk })
		k, _ := barcode.KeyFromSeed(1, bytes.Repeat([]byte{1}, 32))
		kr, _ := barcode.NewKeyring(k)
		w := wallets.New(store.NewView[wallets.Queries](s), clk, nil, wallets.Options{Inspection: kr})
		ctx := context.Background()
		rnd := rand.New(rand.NewPCG(1, 2))
		err := s.Write(ctx, func(q store.Q) error {
			for i := range entries {
				at := start.Add(-30 * 24 * time.Hour).Add(time.Duration(i) * 30 * 24 * time.Hour / entries)
				r := ticketing.Revocation{TicketID: fmt.Sprintf("farebox-ticket-%08x-%04x-4%03x-%04x-%012x", rnd.Uint32(), rnd.Uint32()&0xffff,
					rnd.Uint32()&0xfff, 0x8000|rnd.Uint32()&0x3fff, rnd.Uint64()&(1<<48-1)),
					Kind: ticketing.RevocationRevoked, Reason: "Fahrgeld erstattet", RevokedAt: at, ValidUntil: start.Add(20 * 24 * time.Hour)}
				if i == entries/2 {
					r = ticketing.Revocation{Kind: ticketing.RevocationKey, KeyID: 7, Reason: "Schlüssel kompromittiert", RevokedAt: at, ValidUntil: start.Add(31 * 24 * time.Hour)}
				}
				if _, err := q.AppendRevocation(ctx, r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		for _, sync := range []struct {
			name  string
			since int64
		}{{"from_empty", 0}, {"from_yesterday", entries - entries/30}} {
			b.Run(sync.name, func(b *testing.B) {
				var size int
				for b.Loop() {
					f, err := w.Revocations(ctx, sync.since)
					if err != nil {
						b.Fatal(err)
					}
					body, _ := json.Marshal(f)
					r, err := barcode.VerifyFeed(body, kr)
					if err != nil || len(r.ByTicket)+len(r.ByKey) != int(entries-sync.since) {
						b.Fatalf("%v: %d entries", err, len(r.ByTicket)+len(r.ByKey))
					}
					size = len(body)
				}
				b.ReportMetric(float64(size), "bytes/sync")
				b.ReportMetric(float64(gzipSize(f0(b, w, sync.since))), "gzip_bytes/sync")
			})
		}
	})
}

// f0 is the served feed after since, encoded.
func f0(b *testing.B, w *wallets.Service, since int64) []byte {
	f, err := w.Revocations(context.Background(), since)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := f.MarshalJSON()
	return body
}

// gzipSize is the size of body gzip-compressed as the endpoint sends it.
func gzipSize(body []byte) int {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(body)
	_ = zw.Close()
	return buf.Len()
}
