// Package fareexport writes the catalog's fares in the formats journey planners
// and the national access point read (docs/fares.md): a NeTEx fare delivery
// (netex.go) and the GTFS Fares v2 files of a GTFS feed (gtfs.go). Both
// are streamed: one area or product at a time goes to the writer, so the
// memory an export needs does not grow with the catalog.
package fareexport

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/catalog"
)

// Formats of an export.
const (
	FormatNeTEx = "netex"
	FormatGTFS  = "gtfs-fares-v2"
)

// Source is what an export publishes: the loaded catalog at a version.
type Source struct {
	Catalog *catalog.Index
	// Version and UpdatedAt are the catalog's version and the time it was
	// imported: the delivery's version and timestamp, so an export is the
	// same bytes for the same catalog.
	Version   int64
	UpdatedAt time.Time
	// Codespace is the prefix of every NeTEx id (the instance's id prefix).
	Codespace string
	// Seller is the organisation publishing the fares (NeTEx Operator name).
	Seller string
	// AreaID limits the export to one area and its products ("": all).
	AreaID string
}

// Areas returns the areas the export covers, in the catalog's order (the
// local areas, then the national one); ok is false when AreaID names no
// area.
func (s Source) Areas() (areas []*catalog.AreaEntry, ok bool) {
	if s.AreaID != "" {
		a, found := s.Catalog.Area(s.AreaID)
		if !found {
			return nil, false
		}
		return []*catalog.AreaEntry{a}, true
	}
	areas = append(areas, s.Catalog.Local()...)
	if n := s.Catalog.National(); n != nil {
		areas = append(areas, n)
	}
	return areas, true
}

// Rider is the kind of traveller a product is sold to: its customer type,
// or the job-ticket employee for a restricted product.
type Rider struct {
	ID, Name, UserType string
	Default            bool
}

// Riders are every rider a catalog's products name.
var (
	RiderAdult    = Rider{ID: "adult", Name: "Erwachsene", UserType: "adult", Default: true}
	RiderChild    = Rider{ID: "child", Name: "Kinder", UserType: "child"}
	RiderEmployee = Rider{ID: "employee", Name: "Beschäftigte (Jobticket über den Arbeitgeber)", UserType: "employee"}
	Riders        = []Rider{RiderAdult, RiderChild, RiderEmployee}
)

// RiderOf is the rider p is sold to: a restricted product (the job ticket,
// sold only to accounts granted it) is the employees'.
func RiderOf(p *catalog.Product) Rider {
	switch {
	case p.Restricted:
		return RiderEmployee
	case p.CustomerType == catalog.CustomerChild:
		return RiderChild
	}
	return RiderAdult
}

// Amount writes cents as a decimal of the currency's unit ("3.80").
func Amount(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

// idPart keeps an id usable inside a NeTEx id (ObjectIdType allows any
// normalized string; ':' separates the parts).
func idPart(s string) string { return strings.ReplaceAll(s, ":", "_") }

// ErrNoArea is returned when Source.AreaID names no area of the catalog.
var ErrNoArea = errors.New("fares: no such area")
