package wallets

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/ticketing"
)

// benchTicket is the monthly national ticket of the default catalog.
func benchTicket(b *testing.B) passes.TicketDetails {
	f, err := catalog.Default("farebox")
	if err != nil {
		b.Fatal(err)
	}
	var p *catalog.Product
	for i := range f.Products {
		if f.Products[i].TicketType == catalog.TicketMonth && !f.Products[i].Restricted {
			p = &f.Products[i]
		}
	}
	var area *catalog.AreaEntry
	for _, a := range f.Areas {
		if a.ID == p.AreaID {
			area = &catalog.AreaEntry{Area: a}
		}
	}
	from := time.Date(2026, 5, 31, 22, 0, 0, 0, time.UTC)
	return passes.TicketDetails{Product: p, Area: area, Valid: true, Ticket: ticketing.Ticket{
		ID: "farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f", ProductID: p.ID, Environment: account.Live,
		IdentificationMedium: json.RawMessage(`{"photo_id_lite":{"first_name":"Jürgen","last_name":"Müller-Lüdenscheidt","birth_date":"1990-02-28"}}`),
		ValidFrom:            from, ValidUntil: from.AddDate(0, 1, 0).Add(-time.Second)}}
}

// BenchmarkTicketWallet is the per-read cost the barcode adds to PATCH
// …/tickets/{id}.json: sign the payload, and draw its Aztec PNG on the first
// read (cold) or take it from the cache (warm).
func BenchmarkTicketWallet(b *testing.B) {
	k, _ := barcode.KeyFromSeed(1, bytes.Repeat([]byte{1}, 32))
	kr, _ := barcode.NewKeyring(k)
	d := benchTicket(b)
	for _, warm := range []bool{false, true} {
		name := "cold"
		if warm {
			name = "warm"
		}
		b.Run(name, func(b *testing.B) {
			w := &Service{o: Options{Inspection: kr}}
			b.ReportAllocs()
			for b.Loop() {
				if !warm {
					w.barcodes = barcodeCache{}
				}
				if _, props, _, err := w.offer(d); err != nil || props == nil {
					b.Fatal(err)
				}
			}
		})
	}
}
