package googletest

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckObject: the stand-in refuses what the Google Wallet API
// refuses in a rotatingBarcode, naming the field.
func TestCheckObject(t *testing.T) {
	good := `{"type":"AZTEC","valuePattern":"FR1.x.{totp_timestamp_seconds}.{totp_value_0}","alternateText":"T-1",
		"totpDetails":{"periodMillis":"30000","algorithm":"TOTP_SHA1","parameters":[{"key":"00ff","valueLength":8}]}}`
	obj := func(rb string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(`{"rotatingBarcode":`+rb+`}`), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if err := CheckObject(obj(good)); err != nil {
		t.Fatal(err)
	}
	for bad, field := range map[string]string{
		strings.Replace(good, `"AZTEC"`, `"ROTATING"`, 1):                         "type",
		strings.Replace(good, `"valuePattern":"FR1`, `"valuePattern":3,"x":"`, 1): "valuePattern",
		strings.Replace(good, `"30000"`, `"30s"`, 1):                              "periodMillis",
		strings.Replace(good, `"30000"`, `0`, 1):                                  "periodMillis",
		strings.Replace(good, `"TOTP_SHA1"`, `"TOTP_SHA256"`, 1):                  "algorithm",
		strings.Replace(good, `"00ff"`, `"zz"`, 1):                                "parameters[0].key",
		strings.Replace(good, `"valueLength":8`, `"valueLength":"8"`, 1):          "parameters[0].valueLength",
		strings.Replace(good, `{totp_value_0}`, `{totp_value_1}`, 1):              "valuePattern",
		`{"type":"AZTEC","valuePattern":"{totp_value_0}"}`:                        "totpDetails",
	} {
		if err := CheckObject(obj(bad)); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want an error naming %s", bad, err, field)
		}
	}
	if err := CheckObject(map[string]any{"barcode": map[string]any{"type": "AZTEC"}}); err == nil {
		t.Error("a barcode without value passed")
	}
}
