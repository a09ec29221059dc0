package barcode

// The error codes of package barcode: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeBadBarcodeSignature       = "bad_barcode_signature"
	CodeBarcodeTooLarge           = "barcode_too_large"
	CodeDuplicateInspectionKeyID  = "duplicate_inspection_key_id"
	CodeImageTooLarge             = "image_too_large"
	CodeInspectionKeyIDsExhausted = "inspection_key_ids_exhausted"
	CodeInspectionKeyNotFound     = "inspection_key_not_found"
	CodeInvalidBarcodeClaims      = "invalid_barcode_claims"
	CodeInvalidBarcodeScale       = "invalid_barcode_scale"
	CodeInvalidEnvironment        = "invalid_environment"
	CodeInvalidInspectionKey      = "invalid_inspection_key"
	CodeInvalidKeySet             = "invalid_key_set"
	CodeInvalidRevocationFeed     = "invalid_revocation_feed"
	CodeMalformedBarcode          = "malformed_barcode"
	CodeNoBarcodeFound            = "no_barcode_found"
	CodeNoInspectionSigningKey    = "no_inspection_signing_key"
	CodeTestKeySignedLiveBarcode  = "test_key_signed_live_barcode"
	CodeUnknownBarcodeKey         = "unknown_barcode_key"
	CodeUnreadableImage           = "unreadable_image"
	CodeUnsupportedBarcode        = "unsupported_barcode"
)
