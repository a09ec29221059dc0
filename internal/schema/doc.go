// Package schema validates activation payloads (identification media and
// tariff settings) against the JSON Schemas a product carries, and turns the
// failures into the exact 422 errors the phone SDKs branch on.
//
// Schemas are JSON Schema draft-04 (the default when a schema has no
// $schema) compiled with github.com/santhosh-tekuri/jsonschema/v6; format
// assertions are on, so "format": "date" rejects 1990-02-30. A schema may not
// load anything remote or from disk: every $ref must point inside the schema.
// Instances are decoded with numbers as json.Number (Decode), never float64.
//
// Errors: a failing identification medium is a 422 with code
// identification_medium_invalid and a message that starts with
// "identification_medium: " followed by each problem as "<pointer> <text>"
// (for example "identification_medium: /photo_id_lite/birth_date must be a
// date (YYYY-MM-DD)"); tariff settings likewise with "tariff_settings: " and
// tariff_settings_invalid. Details carry one entry per problem with the field
// pointer prefixed by /identification_medium or /tariff_settings.
//
// Cache compiles each distinct schema (by SHA-256 of its bytes) once and is
// safe for concurrent use; it never evicts, which is fine because schemas come
// from the catalog, not from clients.
//
// MonthlyIdentificationMedium and MonthlyTariffSettings are the monthly
// national product's schemas, shaped so the iOS SDK's strict decoder accepts
// them (client-contract.md 3.2 and 3.3).
package schema
