package httpapi_test

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/httpapi"
)

// operatorSignedIn is a visitor signed in to the operator console.
func operatorSignedIn(t testing.TB, e *apitest.Env, lang string) *visitor {
	t.Helper()
	v := newVisitor(t, e, lang)
	form := v.must(200, "GET", "/admin/sign-in", nil)
	v.must(http.StatusSeeOther, "POST", "/admin/sign-in", url.Values{"csrf_token": {form.csrf(t)}, "user": {"ops"}, "password": {testOperatorPassword}})
	return v
}

// TestClearingOverHTTP: two national ticket months sold through the API
// (Bavaria, abroad), the operator's preview, the report frozen by the first
// export after the month, the CSV of the same rows, the verification, the
// page with the map in English and German, bad months refused naming the
// field, and nothing without the operator's session. Both engines.
func TestClearingOverHTTP(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{Configure: withOperator(t)}, func(t *testing.T, e *apitest.Env) {
		anon := newVisitor(t, e, "en")
		if r := anon.do("GET", "/admin/clearing", nil); r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/admin/sign-in" {
			t.Errorf("the page without a session: %d %q", r.Status, r.Header.Get("Location"))
		}
		for _, p := range []string{"/admin/clearing/2026-06/report.json", "/admin/clearing/2026-06/report.csv", "/admin/clearing/2026-06/verify.json"} {
			// The downloads are read by programs: their errors are JSON.
			if r := anon.do("GET", p, nil); r.Status != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") ||
				!strings.Contains(r.Body, `"code":"`+httpapi.CodeSignInRequired+`"`) {
				t.Errorf("%s without a session: %d %q %s", p, r.Status, r.Header.Get("Content-Type"), r.Body)
			}
		}
		ids := productIDs(t, e)
		for _, pc := range []string{"80331", "not-germany"} {
			o := order(t, e, e.LiveKey, ids["month/adult"])
			e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/coupons/" + str(o.Coupons[0]["id"]) + "/activate.json",
				Body: map[string]any{"identification_medium": medium("Max", "M", "1990-01-01"), "tariff_settings": map[string]any{"german_postal_code": pc}}})
		}
		v := operatorSignedIn(t, e, "en")
		type report struct {
			Final  bool              `json:"final"`
			Rows   []json.RawMessage `json:"rows"`
			Totals struct {
				States []struct {
					State string `json:"federal_state"`
					Count int    `json:"ticket_months"`
					Gross int64  `json:"gross_amount_in_cents"`
				} `json:"federal_states"`
				All struct {
					Count int   `json:"ticket_months"`
					Gross int64 `json:"gross_amount_in_cents"`
					Net   int64 `json:"net_amount_in_cents"`
					VAT   int64 `json:"vat_amount_in_cents"`
				} `json:"all"`
			} `json:"totals"`
		}
		get := func(path string) report {
			r := v.must(200, "GET", path, nil)
			var rep report
			if err := json.Unmarshal([]byte(r.Body), &rep); err != nil {
				t.Fatalf("%s: %v\n%s", path, err, r.Body)
			}
			return rep
		}
		if rep := get("/admin/clearing/2026-06/report.json"); rep.Final || len(rep.Rows) != 2 || rep.Totals.All.Gross != 9800 {
			t.Fatalf("June preview: %+v", rep)
		}
		e.Clock.Set(time.Date(2026, 7, 1, 6, 0, 0, 0, time.UTC))
		v = operatorSignedIn(t, e, "en") // the console session ended meanwhile
		rep := get("/admin/clearing/2026-06/report.json")
		if !rep.Final || rep.Totals.All.Count != 2 || rep.Totals.All.Gross != 9800 || rep.Totals.All.Net+rep.Totals.All.VAT != 9800 {
			t.Fatalf("June report: %+v", rep)
		}
		byState := map[string]int{}
		for _, s := range rep.Totals.States {
			byState[s.State] = s.Count
		}
		if len(rep.Totals.States) != 18 || byState["DE-BY"] != 1 || byState["not-germany"] != 1 || byState["DE-BE"] != 0 {
			t.Errorf("states: %+v", rep.Totals.States)
		}
		c := v.must(200, "GET", "/admin/clearing/2026-06/report.csv", nil)
		recs, err := csv.NewReader(strings.NewReader(c.Body)).ReadAll()
		if err != nil || len(recs) != 3 || recs[0][8] != "federal_state" || !strings.HasPrefix(c.Header.Get("Content-Type"), "text/csv") {
			t.Errorf("CSV: %v %v", recs, err)
		}
		var ver struct {
			OK             bool  `json:"ok"`
			BillableMonths int   `json:"billable_ticket_months"`
			BillableGross  int64 `json:"billable_gross_amount_in_cents"`
		}
		if err := json.Unmarshal([]byte(v.must(200, "GET", "/admin/clearing/2026-06/verify.json", nil).Body), &ver); err != nil || !ver.OK ||
			ver.BillableMonths != 2 || ver.BillableGross != 9800 {
			t.Errorf("verify: %+v %v", ver, err)
		}
		p := v.must(200, "GET", "/admin/clearing?month=2026-06", nil)
		for _, want := range []string{`<svg viewBox="0 0 600 810" role="img"`, `Bayern (DE-BY): 49,00 €`, `class="lvl4"`, `2026-06 is reported`, `id="clearing-total-gross">98,00 €`} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		if strings.Count(p.Body, "<path ") != 16 {
			t.Errorf("%d state outlines, want 16", strings.Count(p.Body, "<path "))
		}
		de := operatorSignedIn(t, e, "de")
		if p := de.must(200, "GET", "/admin/clearing", nil); !strings.Contains(p.Body, "Einnahmen je Bundesland") || !strings.Contains(p.Body, "2026-06 ist gemeldet") {
			t.Errorf("German page:\n%.3000s", p.Body)
		}
		for _, bad := range []string{"2026-13", "June", "2027-01", "2023-01"} {
			for _, file := range []string{"report.json", "report.csv", "verify.json"} {
				r := v.do("GET", "/admin/clearing/"+bad+"/"+file, nil)
				// The downloads answer errors as JSON (consoleDownload), naming the field.
				if r.Status != 400 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") ||
					!strings.Contains(r.Body, `"code":"invalid_parameter"`) || !strings.Contains(r.Body, `"field":"month"`) {
					t.Errorf("%s/%s: %d %q %s", bad, file, r.Status, r.Header.Get("Content-Type"), r.Body)
				}
			}
		}
		if r := v.do("GET", "/admin/clearing?month=2026-1", nil); r.Status != 400 {
			t.Errorf("page with a bad month: %d", r.Status)
		}
	})
}
