package httpapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/retention"
)

// erasure is the part of a PersonalDataErasure the tests read.
type erasure struct {
	Object  string `json:"object"`
	Classes []struct {
		Class   string  `json:"class"`
		State   string  `json:"state"`
		Until   *string `json:"until"`
		Records []struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		} `json:"records"`
	} `json:"classes"`
}

func (er erasure) class(class, state string) (ids map[string]string, until string, ok bool) {
	for _, c := range er.Classes {
		if c.Class == class && c.State == state {
			ids = map[string]string{}
			for _, r := range c.Records {
				ids[r.ID] = r.Type
			}
			if c.Until != nil {
				until = *c.Until
			}
			return ids, until, true
		}
	}
	return nil, "", false
}

// privacyExport is the part of a PersonalDataExport the tests read.
type privacyExport struct {
	Object  string `json:"object"`
	Coupons []struct {
		ID             string          `json:"id"`
		TariffSettings json.RawMessage `json:"tariff_settings"`
	} `json:"coupons"`
	Tickets []struct {
		ID                   string          `json:"id"`
		IdentificationMedium json.RawMessage `json:"identification_medium"`
		Erased               bool            `json:"identification_erased"`
		ErasedFrom           *string         `json:"identification_erased_from"`
	} `json:"tickets"`
	Subscriptions []map[string]any `json:"subscriptions"`
	Customers     []map[string]any `json:"customers"`
	Billing       []struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		KeptUntil string `json:"kept_until"`
	} `json:"billing_records"`
}

// TestPrivacyCouponExportAndErasure: a partner exports a coupon (medium,
// postal code, billing records), erases it: the identification data is
// gone at once (the still valid ticket is revoked), the billing records
// are restricted until the end of 2034; the erased ticket and coupon keep
// answering in the SDK shapes and the OpenAPI schemas; a second export or
// erasure is 409 already_erased; events hold no erased data; bad input
// changes nothing.
func TestPrivacyCouponExportAndErasure(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		o := order(t, e, e.LiveKey, ids["month/adult"], ids["single/adult"])
		subs, others := o.split()
		monthly, single := str(subs[0]["id"]), str(others[0]["id"])
		mustActivate(t, e, "v9", monthly, map[string]any{"identification_medium": medium("Max", "Muster", "1990-01-01"),
			"tariff_settings": map[string]any{"german_postal_code": "10115"}})
		tid := mustActivate(t, e, "v9", single, map[string]any{"identification_medium": medium("Erika", "Beispiel", "1985-03-04")})

		var ex privacyExport
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/privacy/coupons/" + single + ".json", Key: e.LiveKey}).JSON(t, &ex)
		if ex.Object != "personal_data_export" || len(ex.Tickets) != 1 || !strings.Contains(string(ex.Tickets[0].IdentificationMedium), "Erika") ||
			ex.Tickets[0].Erased || ex.Tickets[0].ErasedFrom == nil {
			t.Fatalf("export before erasure: %+v", ex)
		}
		if len(ex.Billing) != 1 || ex.Billing[0].Type != "billable_item" || ex.Billing[0].KeptUntil != "2034-12-31T23:00:00Z" {
			t.Fatalf("billing records: %+v", ex.Billing)
		}
		var mex privacyExport
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/privacy/coupons/" + monthly + ".json", Key: e.LiveKey}).JSON(t, &mex)
		if len(mex.Coupons) != 1 || !strings.Contains(string(mex.Coupons[0].TariffSettings), "10115") {
			t.Fatalf("monthly export: %+v", mex)
		}

		// Bad input: an unknown field is a 400 naming it; nothing changes.
		r := e.Do(apitest.Req{Method: "POST", Path: "/v1/privacy/coupons/" + single + "/erasure.json", Key: e.LiveKey, Body: map[string]any{"really": true}})
		if r.Status != 400 || !strings.Contains(string(r.Body), "really") {
			t.Fatalf("unknown field: %d %s", r.Status, r.Body)
		}
		r = e.Do(apitest.Req{Method: "POST", Path: "/v1/privacy/coupons/farebox-coupon-00000000-0000-4000-8000-000000000000/erasure.json", Key: e.LiveKey})
		if r.Status != 404 || str(r.Map(t)["code"]) != "coupon_not_found" {
			t.Fatalf("unknown coupon: %d %s", r.Status, r.Body)
		}
		// The test key of the same account: 404, as for another account.
		r = e.Do(apitest.Req{Method: "POST", Path: "/v1/privacy/coupons/" + single + "/erasure.json", Key: e.TestKey})
		if r.Status != 404 {
			t.Fatalf("other environment: %d %s", r.Status, r.Body)
		}
		if got := ticket(t, e, tid)["ticket"].(map[string]any)["properties"].(map[string]any)["identification_medium"]; !strings.Contains(jsonText(t, got), "Erika") {
			t.Fatalf("refused erasures changed the ticket: %v", got)
		}

		var er erasure
		e.Must(200, apitest.Req{Method: "POST", Path: "/v1/privacy/coupons/" + single + "/erasure.json", Key: e.LiveKey}).JSON(t, &er)
		erased, _, ok := er.class("identification", "erased")
		if !ok || erased[tid] != "ticket" || erased[single] != "coupon" {
			t.Fatalf("identification not erased: %+v", er)
		}
		kept, until, ok := er.class("billing_records", "restricted")
		if !ok || len(kept) != 1 || until != "2034-12-31T23:00:00Z" {
			t.Fatalf("billing records not restricted until the end of 2034: %+v", er)
		}

		// The erased ticket: SDK shape (ticket() checks it and the OpenAPI
		// schema), neutral names, invalid with kind erased.
		tk := ticket(t, e, tid)
		props := tk["ticket"].(map[string]any)["properties"].(map[string]any)
		pm := props["identification_medium"].(map[string]any)["photo_id_lite"].(map[string]any)
		if pm["first_name"] != retention.ErasedName || pm["last_name"] != retention.ErasedName || pm["birth_date"] != retention.ErasedBirthDate {
			t.Fatalf("erased medium: %v", pm)
		}
		if tk["valid"] != false || !strings.HasPrefix(str(tk["revocation_reason"]), "erased: ") {
			t.Fatalf("erased ticket still valid: %v %v", tk["valid"], tk["revocation_reason"])
		}
		if c := coupon(t, e, "v9", single); c["tariff_settings"] != nil {
			t.Fatalf("coupon tariff settings: %v", c["tariff_settings"])
		}
		// The erased ticket through every SDK version's fetch.
		for _, v := range []string{"v6", "v7", "v8"} {
			rr := e.Must(200, apitest.Req{Method: "PATCH", Path: "/" + v + "/ticketing/tickets/" + tid + ".json"})
			e.MustMatch("ticket "+v, rr.Body, apitest.SDKTicket)
		}

		for _, req := range []apitest.Req{
			{Method: "POST", Path: "/v1/privacy/coupons/" + single + "/erasure.json", Key: e.LiveKey},
			{Method: "GET", Path: "/v1/privacy/coupons/" + single + ".json", Key: e.LiveKey},
		} {
			r := e.Do(req)
			if r.Status != 409 || str(r.Map(t)["code"]) != "already_erased" {
				t.Fatalf("%s again: %d %s", req.Method, r.Status, r.Body)
			}
		}

		// Events: the ticket.issued of the erased ticket is redacted; the
		// coupon.erased event carries the answer; no event holds the name.
		evs := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/events.json?limit=100", Key: e.LiveKey})
		if strings.Contains(string(evs.Body), "Erika") || strings.Contains(string(evs.Body), "1985-03-04") {
			t.Fatalf("events still hold the erased medium: %s", evs.Body)
		}
		if !strings.Contains(string(evs.Body), `"coupon.erased"`) || !strings.Contains(string(evs.Body), "Max") {
			t.Fatalf("events: coupon.erased missing or the other coupon's ticket redacted too: %.400s", evs.Body)
		}
	})
}

// TestPrivacySubscriptionErasure: erasing a subscription erases the
// medium and postal code of all its coupons and tickets; a reactivation
// must then name the passenger again.
func TestPrivacySubscriptionErasure(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		_, cid := orderFirst(t, e, e.LiveKey, ids["month/adult"])
		tid := mustActivate(t, e, "v9", cid, map[string]any{"identification_medium": medium("Max", "Muster", "1990-01-01"),
			"tariff_settings": map[string]any{"german_postal_code": "20095"}})
		sub := str(coupon(t, e, "v9", cid)["subscription"].(map[string]any)["id"])
		var ex privacyExport
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/privacy/subscriptions/" + sub + ".json", Key: e.LiveKey}).JSON(t, &ex)
		if len(ex.Subscriptions) != 1 || len(ex.Coupons) != 1 || len(ex.Tickets) != 1 || len(ex.Billing) == 0 {
			t.Fatalf("subscription export: %+v", ex)
		}
		var er erasure
		e.Must(200, apitest.Req{Method: "POST", Path: "/v1/privacy/subscriptions/" + sub + "/erasure.json", Key: e.LiveKey, Body: map[string]any{}}).JSON(t, &er)
		if erased, _, ok := er.class("identification", "erased"); !ok || erased[tid] != "ticket" || erased[cid] != "coupon" {
			t.Fatalf("subscription erasure: %+v", er)
		}
		tk := ticket(t, e, tid)
		if s := jsonText(t, tk); strings.Contains(s, "Muster") || strings.Contains(s, "20095") {
			t.Fatalf("erased subscription ticket: %s", s)
		}
		if c := coupon(t, e, "v9", cid); c["tariff_settings"] != nil {
			t.Fatalf("coupon tariff settings kept: %v", c["tariff_settings"])
		}
		r := e.Do(apitest.Req{Method: "GET", Path: "/v1/privacy/subscriptions/" + sub + ".json", Key: e.LiveKey})
		if r.Status != 409 || str(r.Map(t)["code"]) != "already_erased" {
			t.Fatalf("export after erasure: %d %s", r.Status, r.Body)
		}
		// The coupon of an erased subscription is erased too.
		r = e.Do(apitest.Req{Method: "POST", Path: "/v1/privacy/coupons/" + cid + "/erasure.json", Key: e.LiveKey})
		if r.Status != 409 || str(r.Map(t)["code"]) != "already_erased" {
			t.Fatalf("coupon of an erased subscription: %d %s", r.Status, r.Body)
		}
	})
}

// TestPrivacyCustomerErasure: a customer without documents is erased at
// once; one with an invoice is restricted until the invoice's duty ends
// (end of 2034), shown with neutral values and refused for new items and
// documents, and erased by the retention job once the duty has ended.
func TestPrivacyCustomerErasure(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		lonely := newCustomer(t, e, e.LiveKey, []string{"Anna Allein", "Weg 2", "01067 Dresden"}, nil)
		billed := newCustomer(t, e, e.LiveKey, []string{"Muster GmbH", "Hauptstraße 1", "10115 Berlin"}, nil)
		items := orderSingles(t, e, e.LiveKey, 3)
		put(t, e, e.LiveKey, items[0], map[string]any{"customer_id": billed})
		put(t, e, e.LiveKey, items[2], map[string]any{"customer_id": billed})
		inv := issue(t, e, e.LiveKey, items[0], billed, nil)

		var ex privacyExport
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/privacy/customers/" + billed + ".json", Key: e.LiveKey}).JSON(t, &ex)
		if len(ex.Customers) != 1 || !strings.Contains(jsonText(t, ex.Customers[0]), "Muster GmbH") {
			t.Fatalf("customer export: %+v", ex)
		}
		found := false
		for _, b := range ex.Billing {
			found = found || (b.Type == "invoice" && b.ID == inv.InvoiceID)
		}
		if !found {
			t.Fatalf("customer export lacks its invoice: %+v", ex.Billing)
		}

		var er erasure
		e.Must(200, apitest.Req{Method: "POST", Path: "/v1/privacy/customers/" + lonely + "/erasure.json", Key: e.LiveKey}).JSON(t, &er)
		if got, _, ok := er.class("billing_records", "erased"); !ok || got[lonely] != "customer" {
			t.Fatalf("customer without documents: %+v", er)
		}
		c, err := e.Store.Read().Customer(ctx, e.AccountID, account.Live, lonely)
		if err != nil || strings.Join(c.AddressLines, "|") != retention.ErasedName {
			t.Fatalf("stored address after erasure: %v %v", c.AddressLines, err)
		}

		e.Must(200, apitest.Req{Method: "POST", Path: "/v1/privacy/customers/" + billed + "/erasure.json", Key: e.LiveKey}).JSON(t, &er)
		got, until, ok := er.class("billing_records", "restricted")
		if !ok || got[billed] != "customer" || until != "2034-12-31T23:00:00Z" {
			t.Fatalf("customer with an invoice: %+v", er)
		}
		shown := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/customers/" + billed + ".json", Key: e.LiveKey}).Map(t)
		if strings.Contains(jsonText(t, shown), "Muster") {
			t.Fatalf("restricted customer shown: %v", shown)
		}
		// Restricted: kept for the duty, no new use.
		c, _ = e.Store.Read().Customer(ctx, e.AccountID, account.Live, billed)
		if c.AddressLines[0] != "Muster GmbH" {
			t.Fatalf("restricted data not kept: %v", c.AddressLines)
		}
		r := e.Do(apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_item/" + items[2] + "/invoice/" + billed + ".json", Key: e.LiveKey})
		if r.Status != 409 || str(r.Map(t)["code"]) != "customer_erased" {
			t.Fatalf("invoice to a restricted customer: %d %s", r.Status, r.Body)
		}
		r = e.Do(apitest.Req{Method: "PUT", Path: "/v5/ticketing/billable_item/" + items[1] + ".json", Key: e.LiveKey, Body: map[string]any{"customer_id": billed}})
		if r.Status != 422 || str(r.Map(t)["code"]) != "customer_erased" || !strings.Contains(string(r.Body), "/customer_id") {
			t.Fatalf("assigning a restricted customer: %d %s", r.Status, r.Body)
		}
		// The issued invoice's document is served unchanged.
		for _, req := range []apitest.Req{
			{Method: "GET", Path: "/v1/privacy/customers/" + billed + ".json", Key: e.LiveKey},
			{Method: "POST", Path: "/v1/privacy/customers/" + billed + "/erasure.json", Key: e.LiveKey},
		} {
			r := e.Do(req)
			if r.Status != 409 || str(r.Map(t)["code"]) != "already_erased" || !strings.Contains(str(r.Map(t)["message"]), "2034-12-31T23:00:00Z") {
				t.Fatalf("%s restricted customer: %d %s", req.Method, r.Status, r.Body)
			}
		}

		// The duty ends: the retention job erases the recipient data.
		e.Clock.Set(time.Date(2035, 1, 2, 0, 0, 0, 0, time.UTC))
		rep, err := e.Privacy.RunRetention(ctx, true)
		if err != nil || rep.Due.Customers != 1 {
			t.Fatalf("dry run: %+v %v", rep.Due, err)
		}
		if rep, err = e.Privacy.RunRetention(ctx, false); err != nil || rep.Customers != 1 {
			t.Fatalf("run: %+v %v", rep, err)
		}
		c, _ = e.Store.Read().Customer(ctx, e.AccountID, account.Live, billed)
		if strings.Join(c.AddressLines, "|") != retention.ErasedName || c.RestrictedUntil != nil {
			t.Fatalf("after the duty: %v %v", c.AddressLines, c.RestrictedUntil)
		}
	})
}

// TestRetentionJobErasesExpiredTickets: the job erases the identification
// data of tickets whose validity ended more than the period ago (and only
// those), the postal codes of their coupons and the personal data of an
// old kept event; the erased ticket still answers in the SDK shape.
func TestRetentionJobErasesExpiredTickets(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		ids := productIDs(t, e)
		o := order(t, e, e.LiveKey, ids["single/adult"])
		old := mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), map[string]any{"identification_medium": medium("Alt", "Fahrgast", "1950-01-01")})
		if rep, err := e.Privacy.RunRetention(ctx, false); err != nil || rep.Tickets != 0 {
			t.Fatalf("nothing is due yet: %+v %v", rep, err)
		}
		// 200 days later a new ticket; the old one ended ~200 days ago.
		e.Clock.Advance(200 * 24 * time.Hour)
		fresh := mustActivate(t, e, "v9", order(t, e, e.LiveKey, ids["single/adult"]).CouponID, map[string]any{"identification_medium": medium("Neu", "Fahrgast", "2000-01-01")})
		e.Clock.Advance(time.Hour)
		dry, err := e.Privacy.RunRetention(ctx, true)
		if err != nil || dry.Due.Tickets != 1 || dry.Due.OldestTicket == nil {
			t.Fatalf("dry run: %+v %v", dry.Due, err)
		}
		if s := jsonText(t, ticket(t, e, old)); !strings.Contains(s, "Alt") {
			t.Fatal("the dry run changed the ticket")
		}
		rep, err := e.Privacy.RunRetention(ctx, false)
		if err != nil || rep.Tickets != 1 {
			t.Fatalf("run: %+v %v", rep, err)
		}
		if s := jsonText(t, ticket(t, e, old)); strings.Contains(s, "Alt") || strings.Contains(s, "1950") {
			t.Fatalf("expired ticket not erased: %s", s)
		}
		if s := jsonText(t, ticket(t, e, fresh)); !strings.Contains(s, "Neu") {
			t.Fatalf("a ticket within its period was erased: %s", s)
		}
		if rep, err := e.Privacy.RunRetention(ctx, false); err != nil || rep.Tickets != 0 {
			t.Fatalf("second run: %+v %v", rep, err)
		}
		var ex privacyExport
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/privacy/coupons/" + str(o.Coupons[0]["id"]) + ".json", Key: e.LiveKey}).JSON(t, &ex)
		if !ex.Tickets[0].Erased || ex.Tickets[0].ErasedFrom != nil {
			t.Fatalf("export of a job-erased ticket: %+v", ex.Tickets)
		}
	})
}

func jsonText(t *testing.T, v any) string { return string(mustJSON(t, v)) }
