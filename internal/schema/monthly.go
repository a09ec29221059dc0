package schema

// MonthlyIdentificationMedium is the identification_medium_schema of the
// monthly national product (interface section 2, client-contract.md 3.2): a
// single oneOf alternative requiring photo_id_lite and nothing else, whose
// properties value is a {"$ref": …} map (a map of string to string, as the
// iOS struct requires); photo_id_lite is titled Photo-Id and requires
// first_name, last_name and birth_date (format date), each with a string type
// and a title. Names must be 1 to 100 characters long.
const MonthlyIdentificationMedium = `{
  "$schema": "http://json-schema.org/draft-04/schema#",
  "type": "object",
  "oneOf": [
    {
      "type": "object",
      "required": ["photo_id_lite"],
      "properties": {
        "photo_id_lite": {"$ref": "#/definitions/photo_id_lite"}
      },
      "additionalProperties": false
    }
  ],
  "definitions": {
    "photo_id_lite": {
      "type": "object",
      "title": "Photo-Id",
      "required": ["first_name", "last_name", "birth_date"],
      "properties": {
        "first_name": {"type": "string", "title": "Vorname", "minLength": 1, "maxLength": 100},
        "last_name": {"type": "string", "title": "Nachname", "minLength": 1, "maxLength": 100},
        "birth_date": {"type": "string", "title": "Geburtsdatum", "format": "date", "examples": ["1990-01-01"]}
      },
      "additionalProperties": false
    }
  }
}`

// MonthlyTariffSettings is the tariff_settings_schema of the monthly national
// product (client-contract.md 3.3): allOf one alternative requiring
// german_postal_code, defined as a titled string of five digits or the
// literal not-germany; no other keys.
const MonthlyTariffSettings = `{
  "$schema": "http://json-schema.org/draft-04/schema#",
  "type": "object",
  "allOf": [
    {
      "type": "object",
      "required": ["german_postal_code"],
      "properties": {
        "german_postal_code": {"$ref": "#/definitions/german_postal_code"}
      },
      "additionalProperties": false
    }
  ],
  "definitions": {
    "german_postal_code": {
      "type": "string",
      "title": "Postleitzahl des Wohnorts (not-germany bei Wohnsitz im Ausland)",
      "pattern": "^([0-9]{5}|not-germany)$",
      "examples": ["10115", "not-germany"]
    }
  }
}`
