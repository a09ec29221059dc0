// Package clearing holds the rules of the national ticket's revenue
// clearing (docs/clearing.md): the federal states as ISO 3166-2:DE codes,
// the postal code → state table shipped with the project (postalcodes.tsv,
// derived by tools/clearingdata from GeoNames, CC-BY 4.0: ATTRIBUTION.md),
// the reporting month, the clearing row and its CSV and JSON encodings,
// and the totals per state and per product. No I/O.
package clearing
