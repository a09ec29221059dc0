package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/ticketing"
)

// BenchmarkIssuedLive reads one day's issuance records out of 20,000
// tickets over three days (the daily export's query, derived from the
// tickets: activation writes nothing for it). go test ./internal/store
// -run '^$' -bench IssuedLive
func BenchmarkIssuedLive(b *testing.B) {
	for _, engine := range []store.Engine{store.SQLite, store.Postgres} {
		b.Run(string(engine), func(b *testing.B) {
			s := storetest.Open(b, engine)
			ctx := context.Background()
			const n = 20000
			var orders []ticketing.Order // 1,000 coupons each (PostgreSQL's parameter limit)
			for i := range n {
				if i%1000 == 0 {
					orders = append(orders, ticketing.Order{ID: fmt.Sprintf("o%d", i), AccountID: fxAccount, Environment: account.Live, RestoreSecret: "s", CreatedAt: fxAt})
				}
				o := &orders[len(orders)-1]
				o.Coupons = append(o.Coupons, ticketing.Coupon{ID: fmt.Sprintf("c%d", i), OrderID: o.ID, Position: i % 1000, AccountID: fxAccount,
					Environment: account.Live, ProductID: fxProduct, CreatedAt: fxAt})
			}
			err := s.Write(ctx, func(q store.Q) error {
				if err := q.CreateAccount(ctx, account.Account{ID: fxAccount, Name: "A", CreatedAt: fxAt}); err != nil {
					return err
				}
				if err := q.UpsertCatalog(ctx, fxCatalog(), fxAt); err != nil {
					return err
				}
				for _, o := range orders {
					if _, err := q.InsertOrderRows(ctx, o, nil, nil, nil); err != nil {
						return err
					}
				}
				for i := range n {
					c := orders[i/1000].Coupons[i%1000]
					at := fxAt.Add(time.Duration(i%3)*24*time.Hour + time.Duration(i)*time.Second)
					err := q.InsertTicket(ctx, ticketing.Ticket{ID: fmt.Sprintf("t%d", i), CouponID: c.ID, AccountID: fxAccount, Environment: account.Live,
						ProductID: fxProduct, IdentificationMedium: []byte(`{"photo_id_lite":{"first_name":"A","last_name":"B","birth_date":"1990-01-01"}}`),
						MediumHash: "h", ValidFrom: at, ValidUntil: at.Add(time.Hour), CreatedAt: at})
					if err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				got, err := s.Read().IssuedLive(ctx, fxAt, fxAt.Add(24*time.Hour))
				if err != nil || len(got) < n/3 {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}
