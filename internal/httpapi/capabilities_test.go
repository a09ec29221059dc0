package httpapi_test

import (
	"net/url"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
)

var uuidV4 = `[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`

// TestCapabilitiesAreUnguessable: every identifier that works as a
// credential (coupon and ticket ids, restore secrets, reactivation keys,
// invoice download identifiers) carries 122 or 128 random bits: a random
// UUID v4 or 32 hex digits from crypto/rand, all distinct.
func TestCapabilitiesAreUnguessable(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.SQLite, apitest.Options{})
	ids := productIDs(t, e)
	patterns := map[string]*regexp.Regexp{
		"coupon":           regexp.MustCompile(`^farebox-coupon-` + uuidV4 + `$`),
		"ticket":           regexp.MustCompile(`^farebox-ticket-` + uuidV4 + `$`),
		"restore secret":   regexp.MustCompile(`^farebox-restore-secret-` + uuidV4 + `$`),
		"reactivation key": regexp.MustCompile(`^farebox-reactivation-key-` + uuidV4 + `$`),
		"download":         regexp.MustCompile(`^[0-9a-f]{32}$`),
	}
	seen := map[string]bool{}
	check := func(kind, v string) {
		t.Helper()
		if !patterns[kind].MatchString(v) {
			t.Errorf("%s %q is not of the random form %s", kind, v, patterns[kind])
		}
		if seen[v] {
			t.Errorf("%s %q issued twice", kind, v)
		}
		seen[v] = true
	}
	for i := 0; i < 4; i++ {
		o := order(t, e, e.LiveKey, ids["month/adult"], ids["single/adult"], ids["single/adult"])
		check("restore secret", o.RestoreSecret)
		for _, c := range o.Coupons {
			cid := str(c["id"])
			check("coupon", cid)
			body := map[string]any{"identification_medium": medium("A", "B", "1990-01-01")}
			if c["subscription"] != nil {
				body["tariff_settings"] = map[string]any{"german_postal_code": "10115"}
			}
			tid := mustActivate(t, e, "v9", cid, body)
			check("ticket", tid)
			if k := str(ticket(t, e, tid)["coupon_reactivation_key"]); k != "" {
				check("reactivation key", k)
			}
			if item, ok := c["billable_item_id"].(string); ok && c["subscription"] == nil {
				inv := issue(t, e, e.LiveKey, item, "", nil)
				u, err := url.Parse(inv.PDFURL)
				if err != nil {
					t.Fatal(err)
				}
				check("download", strings.TrimSuffix(path.Base(u.Path), ".pdf"))
			}
		}
	}
	if len(seen) < 4*(1+3+3+1+2) {
		t.Errorf("only %d capabilities checked", len(seen))
	}
}
