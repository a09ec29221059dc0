// Package catalog holds tariff areas and products, the JSON file format the
// catalog is imported and exported in (docs/catalog.md), its validation, and
// an immutable in-memory Index that answers product searches by city name,
// by coordinates (point in polygon, holes respected, a point on a border
// belongs to both areas) and by bounding box.
//
// The Index never scans every polygon: areas sit in a packed R-tree over
// their bounding boxes, so a coordinate search costs about the same with
// ten thousand areas as with eight. City names are matched after folding
// case, accents, ß/ss and umlaut spellings (ü/ue), and surrounding spaces.
//
// Every local area offers the same four ticket types (single adult, single
// child, day pass adult, and the monthly national subscription). The
// national product belongs to the national area and is part of every local
// area's search result. Restricted products (the job ticket) are shown and
// sold only to accounts the operator granted them.
package catalog
