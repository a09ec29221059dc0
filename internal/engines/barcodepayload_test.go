package engines

import (
	"encoding/json"
	"errors"

	"github.com/farebox/farebox/internal/barcode"
)

// BarcodePayload reads the signed payload back from a stored
// ticket.properties object (the PropBarcode entry); it fails when the
// properties carry no barcode.
func BarcodePayload(properties json.RawMessage) ([]byte, error) {
	var props struct {
		Barcode *BarcodeProperty `json:"inspection_barcode"`
	}
	if err := json.Unmarshal(properties, &props); err != nil || props.Barcode == nil || props.Barcode.Payload == "" {
		return nil, errors.New("the ticket has no inspection barcode")
	}
	return barcode.FromText(props.Barcode.Payload)
}
