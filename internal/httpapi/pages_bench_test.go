package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// BenchmarkTravellerPage is one view of an activated coupon's page over
// HTTP (coupon, product, newest ticket, its signed barcode offer, the
// template), on each engine.
func BenchmarkTravellerPage(b *testing.B) {
	storetest.EachEngineBench(b, func(b *testing.B, engine store.Engine) {
		e := apitest.New(b, engine, apitest.Options{Configure: withWallets(b, true)})
		id := str(order(b, e, e.LiveKey, productIDs(b, e)["month/adult"]).Coupons[0]["id"])
		v := newVisitor(b, e, "de")
		p := v.must(200, "GET", "/c/"+id, nil)
		v.must(http.StatusSeeOther, "POST", "/c/"+id, url.Values{"csrf_token": {p.csrf(b)}, "medium.first_name": {"Erika"},
			"medium.last_name": {"Mustermann"}, "medium.birth_date": {"1985-03-07"}, "tariff.german_postal_code": {"10115"}})
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			v.must(200, "GET", "/c/"+id, nil)
		}
	})
}
