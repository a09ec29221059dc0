package engines

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const (
	maxMedium = `{"identification_medium":{"photo_id_lite":{"first_name":"Max","last_name":"Mustermann","birth_date":"1990-01-01"}}}`
	postal    = `{"tariff_settings":{"german_postal_code":"%s"}}`
)

func postalJSON(code string) string { return strings.Replace(postal, "%s", code, 1) }

func checkIdentification(t *testing.T, res browserResults) {
	medium, tariff := serverValidator(t, mediumSchema), serverValidator(t, tariffSchema)
	multi := serverValidator(t, multiSchema)
	R := res.Identification
	type ids struct {
		Inputs []string `json:"inputs"`
		Submit bool     `json:"submit"`
		Close  bool     `json:"close"`
	}
	checkIDs := func(label string, m map[string]json.RawMessage, want []string) {
		var got ids
		if err := json.Unmarshal(m["ids"], &got); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if diff := cmp.Diff(want, got.Inputs); diff != "" || !got.Submit || !got.Close {
			t.Errorf("%s: inputs/buttons (-want +got):\n%s submit=%v close=%v", label, diff, got.Submit, got.Close)
		}
	}
	lite := []string{"im_photo_id_lite_first_name", "im_photo_id_lite_last_name", "im_photo_id_lite_birth_date"}

	// 1. iOS arity, full schemas.
	ios := R["iosFull"]
	checkIDs("iosFull", ios, append(append([]string{}, lite...), "ts_german_postal_code"))
	empty := decodeGot(t, ios, "empty")
	if empty.Medium != nil || empty.Tariff != nil || len(empty.Errors) != 4 {
		t.Errorf("empty form: %+v", empty)
	}
	bad := decodeGot(t, ios, "badDate")
	if bad.Medium != nil || bad.Tariff != nil {
		t.Errorf("30.02.1990 / 1234 accepted: %+v", bad)
	}
	if serverAccepts(t, medium, `{"photo_id_lite":{"first_name":"Max","last_name":"Mustermann","birth_date":"1990-02-30"}}`) ||
		serverAccepts(t, tariff, `{"german_postal_code":"1234"}`) || serverAccepts(t, tariff, `{"german_postal_code":"12345x"}`) {
		t.Error("the server accepts what the form rejected")
	}
	// Errors clear as their field is corrected, without another submit.
	wantMarks(t, "iosFull after first name", ios, "marksAfterFirstName", formMarks{
		Errors:    []string{"im_photo_id_lite_last_name_error", "im_photo_id_lite_birth_date_error", "ts_german_postal_code_error"},
		Invalid:   []string{"im_photo_id_lite_last_name", "im_photo_id_lite_birth_date", "ts_german_postal_code"},
		FormError: true})
	wantMarks(t, "iosFull after birth date", ios, "marksAfterDate", formMarks{
		Errors: []string{"ts_german_postal_code_error"}, Invalid: []string{"ts_german_postal_code"}, FormError: true})
	// The form is one unit: an invalid tariff field makes the (valid) medium null too, in either call order.
	for _, k := range []string{"badPostal", "badPostalReversed", "badPostal2"} {
		if g := decodeGot(t, ios, k); g.Medium != nil || g.Tariff != nil || len(g.Errors) != 1 {
			t.Errorf("%s: an invalid form must give null for both: %+v", k, g)
		}
	}
	wantJSON(t, "not-germany", decodeGot(t, ios, "notGermany").Tariff, postalJSON("not-germany"), tariff, "tariff_settings")
	v := decodeGot(t, ios, "valid")
	wantJSON(t, "iosFull medium", v.Medium, maxMedium, medium, "identification_medium")
	wantJSON(t, "iosFull tariff", v.Tariff, postalJSON("12345"), tariff, "tariff_settings")
	var posted [][]string
	if err := json.Unmarshal(ios["posted"], &posted); err != nil || len(posted) != 2 {
		t.Fatalf("iOS messages: %v %s", err, ios["posted"])
	}
	var msg struct {
		IdentificationMedium string `json:"identification_medium"`
		TariffSettings       string `json:"tariff_settings"`
	}
	if posted[0][0] != "activate" || json.Unmarshal([]byte(posted[0][1]), &msg) != nil {
		t.Fatalf("iOS activate message %v", posted[0])
	}
	wantJSON(t, "iOS message medium", &msg.IdentificationMedium, maxMedium, medium, "identification_medium")
	wantJSON(t, "iOS message tariff", &msg.TariffSettings, postalJSON("12345"), tariff, "tariff_settings")
	if posted[1][0] != "close" || posted[1][1] != "close" {
		t.Errorf("iOS close message %v", posted[1])
	}

	// 2. Android arity with prefill and the Android bridge.
	and := R["androidPrefill"]
	checkIDs("androidPrefill", and, append(append([]string{}, lite...), "ts_german_postal_code"))
	var values [][]string
	_ = json.Unmarshal(and["values"], &values)
	if diff := cmp.Diff([][]string{{"im_photo_id_lite_first_name", "Max"}, {"im_photo_id_lite_last_name", "Mustermann"},
		{"im_photo_id_lite_birth_date", "01.01.1990"}, {"ts_german_postal_code", ""}}, values); diff != "" {
		t.Errorf("prefill (-want +got):\n%s", diff)
	}
	ag := decodeGot(t, and, "got")
	wantJSON(t, "android medium", ag.Medium, maxMedium, medium, "identification_medium")
	wantJSON(t, "android tariff", ag.Tariff, postalJSON("80331"), tariff, "tariff_settings")
	var calls [][]*string
	if err := json.Unmarshal(and["calls"], &calls); err != nil || len(calls) != 2 || len(calls[0]) != 3 ||
		*calls[0][0] != "activate" || len(calls[1]) != 1 || *calls[1][0] != "close" {
		t.Fatalf("Android calls: %v %s", err, and["calls"])
	}
	wantJSON(t, "Android.activateCoupon medium", calls[0][1], maxMedium, medium, "identification_medium")
	wantJSON(t, "Android.activateCoupon tariff", calls[0][2], postalJSON("80331"), tariff, "tariff_settings")
	var after struct{ Calls, Sdk, SdkClose int }
	_ = json.Unmarshal(and["afterSdkListener"], &after)
	if after.Calls != 2 || after.Sdk != 1 || after.SdkClose != 1 {
		t.Errorf("with an SDK click listener the page must not send itself: %+v", after)
	}

	// 3. iOS re-encoded schema, no tariff schema.
	re := R["iosReencoded"]
	checkIDs("iosReencoded", re, lite)
	// Without a tariff schema an invalid form gives null for the tariff settings too
	// (it used to give {"tariff_settings":{}}, and the iOS SDK then spun forever).
	for _, k := range []string{"empty", "emptyReversed", "badDate"} {
		if e := decodeGot(t, re, k); e.Medium != nil || e.Tariff != nil || len(e.Errors) == 0 {
			t.Errorf("re-encoded %s: %+v", k, e)
		}
	}
	wantMarks(t, "re-encoded corrected", re, "marksCorrected", formMarks{})
	erika := `{"identification_medium":{"photo_id_lite":{"first_name":"Erika","last_name":"Musterfrau","birth_date":"1985-03-07"}}}`
	rv := decodeGot(t, re, "valid")
	wantJSON(t, "re-encoded medium", rv.Medium, erika, medium, "identification_medium")
	if rv.Tariff == nil || *rv.Tariff != `{"tariff_settings":{}}` {
		t.Errorf("re-encoded valid form without tariff schema: tariff %v", rv.Tariff)
	}

	// 3b. Android arity, no tariff schema: nothing is sent while the form is invalid.
	nt := R["androidNoTariff"]
	if g := decodeGot(t, nt, "invalid"); g.Medium != nil || g.Tariff != nil || len(g.Errors) != 2 {
		t.Errorf("androidNoTariff invalid: %+v", g)
	}
	if string(nt["callsInvalid"]) != "0" {
		t.Errorf("Android bridge called for an invalid form: %s", nt["callsInvalid"])
	}
	wantMarks(t, "androidNoTariff corrected", nt, "marksCorrected", formMarks{})
	var ntCalls [][]*string
	if err := json.Unmarshal(nt["calls"], &ntCalls); err != nil || len(ntCalls) != 1 || len(ntCalls[0]) != 3 || *ntCalls[0][0] != "activate" {
		t.Fatalf("androidNoTariff calls: %v %s", err, nt["calls"])
	}
	wantJSON(t, "androidNoTariff medium", ntCalls[0][1], erika, medium, "identification_medium")
	if ntCalls[0][2] == nil || *ntCalls[0][2] != `{"tariff_settings":{}}` {
		t.Errorf("androidNoTariff tariff %v", ntCalls[0][2])
	}

	// 4. Several options, enum and length rules, schemas passed as JSON strings.
	mu := R["multi"]
	checkIDs("multi", mu, []string{"im_photo_id_first_name", "im_photo_id_last_name", "im_photo_id_birth_date", "im_photo_id_id_type",
		"im_photo_id_id_number", "im_photo_id_name_only_first_name", "im_photo_id_name_only_last_name", "ts_german_postal_code"})
	var radios [][]any
	_ = json.Unmarshal(mu["radios"], &radios)
	if diff := cmp.Diff([][]any{{"photo_id", true}, {"photo_id_name_only", false}}, radios); diff != "" {
		t.Errorf("option radios %s", mu["radios"])
	}
	for _, k := range []string{"shortNumber", "longNumber"} {
		if g := decodeGot(t, mu, k); g.Medium != nil || len(g.Errors) != 1 || !strings.HasPrefix(g.Errors[0], "im_photo_id_id_number_error") {
			t.Errorf("%s: %+v", k, g)
		}
	}
	if serverAccepts(t, multi, `{"photo_id":{"first_name":"Ana","last_name":"Lima","birth_date":"2000-12-31","id_type":"passport","id_number":"12345"}}`) {
		t.Error("server accepts a 5-character id number")
	}
	mv := decodeGot(t, mu, "valid")
	wantJSON(t, "multi photo_id", mv.Medium,
		`{"identification_medium":{"photo_id":{"first_name":"Ana","last_name":"Lima","birth_date":"2000-12-31","id_type":"passport","id_number":"C01X00T47"}}}`,
		multi, "identification_medium")
	wantJSON(t, "multi tariff", mv.Tariff, postalJSON("10115"), tariff, "tariff_settings")
	wantJSON(t, "multi name only", decodeGot(t, mu, "nameOnly").Medium,
		`{"identification_medium":{"photo_id_name_only":{"first_name":"Ana","last_name":"Lima-Silva"}}}`, multi, "identification_medium")
	if g := decodeGot(t, mu, "nameOnlyBad"); g.Medium != nil || serverAccepts(t, multi, `{"photo_id_name_only":{"first_name":"Ana","last_name":"L1ma"}}`) {
		t.Errorf("pattern with \\- escape not enforced: %+v", g)
	}
}

// formMarks is what the form shows without a getter being called.
type formMarks struct {
	Errors    []string `json:"errors"`
	Invalid   []string `json:"invalid"`
	FormError bool     `json:"formError"`
}

func wantMarks(t *testing.T, label string, m map[string]json.RawMessage, key string, want formMarks) {
	t.Helper()
	var g formMarks
	if err := json.Unmarshal(m[key], &g); err != nil {
		t.Fatalf("%s: %v (%s)", label, err, m[key])
	}
	if diff := cmp.Diff(want, g, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: marks (-want +got):\n%s", label, diff)
	}
}
