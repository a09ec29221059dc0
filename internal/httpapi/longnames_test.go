package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/barcode"
)

// TestLongPassengerNames: a name the product's schema allows (100
// characters, here 400 bytes of 4-byte characters) is carried whole in the
// barcode, on both passes and in the served barcode image; a name longer
// than a barcode carries (a looser operator schema) is refused at
// activation with a 422 naming the field, and nothing is written.
func TestLongPassengerNames(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, true)}, func(t *testing.T, e *apitest.Env) {
		month := productIDs(t, e)["month/adult"]
		longest := strings.Repeat("𝔄", 100) // the schema's maxLength, 400 bytes
		last := strings.Repeat("ẞ", 90)     // 270 bytes (3-byte characters): over the old 255-byte cut
		activateName := func(first string) *apitest.Resp {
			o := order(t, e, e.LiveKey, month)
			return activate(e, "v9", str(o.Coupons[0]["id"]), map[string]any{"identification_medium": medium(first, last, "1990-01-01"),
				"tariff_settings": map[string]any{"german_postal_code": "10115"}})
		}
		r := activateName(longest)
		if r.Status != 201 {
			t.Fatalf("activation with a 400-byte name: %d %s", r.Status, r.Body)
		}
		tid := str(r.Map(t)["ticket_id"])
		tk := ticket(t, e, tid)
		payload := ticketPayload(t, tk)
		c, err := barcode.Verify(payload, walletKeyring(t))
		if err != nil || c.FirstName != longest || c.LastName != last || c.Version != barcode.VersionLongText {
			t.Errorf("barcode claims: %v first %d bytes, last %d bytes, version %d", err, len(c.FirstName), len(c.LastName), c.Version)
		}
		uri := str(properties(tk)["inspection_barcode_png"])
		img, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(uri, "data:image/png;base64,"))
		if scanned, err := barcode.ParseInput(img); err != nil || !bytes.Equal(scanned, payload) {
			t.Errorf("the served code of the long-name ticket does not scan: %v", err)
		}
		if got := fetchPass(t, e, "/v9", tid).field("passenger"); got != longest+" "+last {
			t.Errorf("Apple pass passenger %d bytes, want %d", len(str(got)), len(longest+" "+last))
		}
		link := string(e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/passes/google_wallet/" + tid + ".json"}).Body)
		claims, _ := googleJWT(t, link)
		if obj := claims["payload"].(map[string]any)["transitObjects"].([]any)[0].(map[string]any); obj["passengerNames"] != longest+" "+last {
			t.Errorf("Google passengerNames %d bytes", len(str(obj["passengerNames"])))
		}

		// An operator schema allowing 200 characters: 101 four-byte characters (404 bytes) are refused.
		f := e.Products.Catalog().File()
		for i := range f.Products {
			if f.Products[i].ID == month {
				f.Products[i].IdentificationMediumSchema = json.RawMessage(strings.ReplaceAll(string(f.Products[i].IdentificationMediumSchema),
					`"maxLength":100`, `"maxLength":200`))
				if !strings.Contains(string(f.Products[i].IdentificationMediumSchema), `"maxLength":200`) {
					t.Fatalf("schema not loosened: %s", f.Products[i].IdentificationMediumSchema)
				}
			}
		}
		if err := e.Products.Import(t.Context(), f); err != nil {
			t.Fatal(err)
		}
		before := counts(t, e)
		r = activateName(longest + "𝔄")
		m := r.Map(t)
		var details []map[string]any
		ds, _ := m["details"].([]any)
		for _, d := range ds {
			if dm, ok := d.(map[string]any); ok {
				details = append(details, dm)
			}
		}
		if r.Status != 422 || m["code"] != "identification_medium_invalid" || !strings.HasPrefix(str(m["message"]), "identification_medium: /photo_id_lite/first_name") ||
			len(details) != 1 || details[0]["field"] != "/identification_medium/photo_id_lite/first_name" {
			t.Errorf("404-byte name: %d %s", r.Status, r.Body)
		}
		after := counts(t, e)
		if after["tickets"] != before["tickets"] {
			t.Errorf("a refused activation wrote %d tickets", after["tickets"]-before["tickets"])
		}
		if r := activateName(longest); r.Status != 201 {
			t.Errorf("400 bytes under the loosened schema: %d %s", r.Status, r.Body)
		}
	})
}
