package googletest

import (
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
)

// barcodeTypes is Google's BarcodeType enum (walletobjects v1), without
// the deprecated aliases and BARCODE_TYPE_UNSPECIFIED.
var barcodeTypes = map[string]bool{"AZTEC": true, "CODE_39": true, "CODE_128": true, "CODABAR": true, "DATA_MATRIX": true,
	"EAN_8": true, "EAN_13": true, "ITF_14": true, "PDF_417": true, "QR_CODE": true, "UPC_A": true, "TEXT_ONLY": true}

var totpValueRE = regexp.MustCompile(`\{totp_value_([0-9]+)\}`)

// CheckObject checks the barcode fields of a TransitObject (or a patch of
// one) as the Google Wallet API does: barcode.type from BarcodeType and a
// string value; rotatingBarcode.type, a valuePattern, and with a
// {totp_value_n} substitution totpDetails with an int64 periodMillis > 0,
// algorithm TOTP_SHA1 and parameters[n] with a Base16 key and a
// valueLength. The error names the field as Google's "Invalid value at"
// does. Tests apply it to the objects a fat save JWT carries too.
func CheckObject(o map[string]any) error {
	if b, has := o["barcode"]; has {
		m, ok := b.(map[string]any)
		if !ok {
			return errors.New("Invalid value at 'resource.barcode'")
		}
		if t, _ := m["type"].(string); !barcodeTypes[t] {
			return errors.New("Invalid value at 'resource.barcode.type'")
		}
		if _, ok := m["value"].(string); !ok {
			return errors.New("Invalid value at 'resource.barcode.value'")
		}
	}
	if r, has := o["rotatingBarcode"]; has {
		m, ok := r.(map[string]any)
		if !ok {
			return errors.New("Invalid value at 'resource.rotatingBarcode'")
		}
		return checkRotating(m)
	}
	return nil
}

func checkRotating(m map[string]any) error {
	at := func(f string) error { return fmt.Errorf("Invalid value at 'resource.rotatingBarcode.%s'", f) }
	if t, _ := m["type"].(string); !barcodeTypes[t] {
		return at("type")
	}
	pattern, ok := m["valuePattern"].(string)
	if !ok || pattern == "" {
		return errors.New("Missing required field: rotatingBarcode.valuePattern")
	}
	if alt, has := m["alternateText"]; has {
		if _, ok := alt.(string); !ok {
			return at("alternateText")
		}
	}
	uses := totpValueRE.FindAllStringSubmatch(pattern, -1)
	d, has := m["totpDetails"]
	if !has {
		if len(uses) > 0 {
			return errors.New("Missing required field: rotatingBarcode.totpDetails")
		}
		return nil
	}
	td, ok := d.(map[string]any)
	if !ok {
		return at("totpDetails")
	}
	if !int64Field(td["periodMillis"]) {
		return at("totpDetails.periodMillis")
	}
	if a, _ := td["algorithm"].(string); a != "TOTP_SHA1" {
		return at("totpDetails.algorithm")
	}
	ps, ok := td["parameters"].([]any)
	if !ok {
		return at("totpDetails.parameters")
	}
	for i, p := range ps {
		pm, ok := p.(map[string]any)
		key, _ := pm["key"].(string)
		if _, err := hex.DecodeString(key); !ok || key == "" || err != nil {
			return at(fmt.Sprintf("totpDetails.parameters[%d].key", i))
		}
		if n, ok := pm["valueLength"].(float64); !ok || n != float64(int(n)) || n < 1 || n > 10 {
			return at(fmt.Sprintf("totpDetails.parameters[%d].valueLength", i))
		}
	}
	for _, u := range uses {
		if n, _ := strconv.Atoi(u[1]); n >= len(ps) {
			return fmt.Errorf("Invalid value at 'resource.rotatingBarcode.valuePattern': %s has no totpDetails.parameters[%d]", u[0], n)
		}
	}
	return nil
}

// int64Field: an int64 of the API's JSON, a decimal string or a number,
// greater than 0.
func int64Field(v any) bool {
	switch x := v.(type) {
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return err == nil && n > 0
	case float64:
		return x > 0 && x == float64(int64(x))
	}
	return false
}
