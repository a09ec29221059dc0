// Package fares is the fare publication capability (docs/fares.md): the
// catalog's fares for journey planners and the national access point, as
// a NeTEx fare delivery or as the GTFS Fares v2 files of a loaded GTFS
// feed. It reads the loaded catalog (products.Service) and, for GTFS, a
// feed's stations through a function the wiring hands it (the transit
// capability's FeedStations); it needs no store method. The formats
// themselves are written by internal/fareexport.
//
// Whose catalog: the catalog is one per instance (every account and both
// environments order from it; restricted products are merely hidden from
// accounts not granted them). What is published is that catalog as the
// seller sells it, the job ticket included: a fare is public information
// under the mobility-data regulation even when only employers buy it.
package fares

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/fareexport"
)

// Formats of an export.
const (
	FormatNeTEx = fareexport.FormatNeTEx
	FormatGTFS  = fareexport.FormatGTFS
)

// Feed is a loaded GTFS feed's stations (the transit capability's
// FeedStations converts to it).
type Feed struct {
	Version   int64
	UpdatedAt time.Time
	Each      func(yield func(stopID string, lat, lon float64) bool)
}

// Stations returns the stations of a loaded feed; an unknown feed is
// apperr.NotFound.
type Stations func(feedID string) (Feed, error)

// Service publishes the instance's catalog.
type Service struct {
	catalog   func() products.Loaded
	stations  Stations
	codespace string
	seller    string
	clock     clock.Clock
}

// New returns the service over the loaded catalog, the feeds' stations
// (nil: no GTFS feeds on this instance), the NeTEx codespace (the id
// prefix), the seller's name and the clock (nil: the system clock).
func New(catalog func() products.Loaded, stations Stations, codespace, seller string, c clock.Clock) *Service {
	if c == nil {
		c = clock.System{}
	}
	if codespace == "" {
		codespace = "farebox"
	}
	return &Service{catalog: catalog, stations: stations, codespace: codespace, seller: seller, clock: c}
}

// Request is what to export.
type Request struct {
	Format string // FormatNeTEx or FormatGTFS
	AreaID string // "": every area
	FeedID string // the GTFS feed whose stations stop_areas.txt lists (GTFS only, required)
}

// MaxParamBytes bounds area_id and feed_id (real ids are far shorter).
const MaxParamBytes = 128

// Check validates a request's parameters without reading the catalog;
// each problem is a 400 naming its parameter.
func (r Request) Check() error {
	const op = "fares.Request"
	switch r.Format {
	case FormatNeTEx, FormatGTFS:
	default:
		return apperr.Param(op, "format", "format must be netex or gtfs-fares-v2")
	}
	for _, p := range []struct{ name, v string }{{"area_id", r.AreaID}, {"feed_id", r.FeedID}} {
		if len(p.v) > MaxParamBytes || !utf8.ValidString(p.v) || strings.ContainsFunc(p.v, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
			return apperr.Param(op, p.name, fmt.Sprintf("%s must be at most %d bytes of printable UTF-8", p.name, MaxParamBytes))
		}
	}
	if r.Format == FormatGTFS && r.FeedID == "" {
		return apperr.Param(op, "feed_id", "feed_id is required: the GTFS fares name the stations of one loaded GTFS feed")
	}
	if r.Format == FormatNeTEx && r.FeedID != "" {
		return apperr.Param(op, "feed_id", "feed_id applies to gtfs-fares-v2 only")
	}
	return nil
}

// Export is a prepared export: what the response's headers say and a
// function writing its body.
type Export struct {
	ContentType string
	FileName    string
	// ETag (quoted, strong) and LastModified change exactly when the body
	// does: with the catalog version, the feed version and, for GTFS, the
	// set of products on sale.
	ETag         string
	LastModified time.Time
	write        func(fareexport.Files, io.Writer) error
}

// Write writes the export's body (the XML, or the GTFS files as a zip).
func (e Export) Write(w io.Writer) error { return e.write(nil, w) }

// WriteDir writes a GTFS export's files into the existing directory dir
// (a NeTEx export is one file: use Write).
func (e Export) WriteDir(dir string) error {
	d := &fareexport.Dir{Path: dir}
	if err := e.write(d, nil); err != nil {
		_ = d.Close()
		return err
	}
	return d.Close()
}

// Prepare checks r against the loaded catalog and feeds and returns the
// export; nothing is written yet, so a caller can answer 304 from the ETag.
func (s *Service) Prepare(r Request) (Export, error) {
	if err := r.Check(); err != nil {
		return Export{}, err
	}
	l := s.catalog()
	src := fareexport.Source{Catalog: l.Catalog, Version: l.Version, UpdatedAt: l.UpdatedAt,
		Codespace: s.codespace, Seller: s.seller, AreaID: r.AreaID}
	if _, ok := src.Areas(); !ok {
		return Export{}, apperr.Param("fares.Prepare", "area_id", "no area with this id in the catalog")
	}
	tag := sha256.New()
	fmt.Fprintf(tag, "%s\x00%s\x00%d\x00", r.Format, r.AreaID, l.Version)
	if r.Format == FormatNeTEx {
		return Export{ContentType: "application/xml; charset=utf-8", FileName: "fares-netex.xml",
			ETag: etag(tag), LastModified: l.UpdatedAt,
			write: func(_ fareexport.Files, w io.Writer) error { return fareexport.WriteNeTEx(w, src) }}, nil
	}
	return s.prepareGTFS(r, src, tag)
}

func (s *Service) prepareGTFS(r Request, src fareexport.Source, tag hash.Hash) (Export, error) {
	if s.stations == nil {
		return Export{}, apperr.Param("fares.Prepare", "feed_id", "this instance serves no GTFS feeds")
	}
	feed, err := s.stations(r.FeedID)
	if err != nil {
		return Export{}, err
	}
	now := s.clock.Now()
	fmt.Fprintf(tag, "%s\x00%d\x00", r.FeedID, feed.Version)
	last := latest(src.UpdatedAt, feed.UpdatedAt)
	areas, _ := src.Areas()
	for _, a := range areas {
		for _, p := range a.Products {
			if p.OnSale(now) {
				fmt.Fprintf(tag, "%s\x00", p.ID)
			}
			last = latest(last, passedBoundary(p, now))
		}
	}
	stops := func(yield func(fareexport.Stop) bool) {
		feed.Each(func(id string, lat, lon float64) bool { return yield(fareexport.Stop{ID: id, Lat: lat, Lon: lon}) })
	}
	return Export{ContentType: "application/zip", FileName: "fares-gtfs-" + r.FeedID + ".zip",
		ETag: etag(tag), LastModified: last,
		write: func(files fareexport.Files, w io.Writer) error {
			if files != nil {
				return fareexport.WriteGTFS(files, src, now, stops)
			}
			zw := zip.NewWriter(w)
			if err := fareexport.WriteGTFS(zw, src, now, stops); err != nil {
				return err
			}
			return zw.Close()
		}}, nil
}

func etag(h hash.Hash) string {
	return `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// passedBoundary is the latest start or end of p's sales window at or
// before now (the zero time when none has passed): a GTFS export changes
// then.
func passedBoundary(p *catalog.Product, now time.Time) time.Time {
	var t time.Time
	for _, b := range []*time.Time{p.SoldFrom, p.SoldUntil} {
		if b != nil && !b.After(now) {
			t = latest(t, *b)
		}
	}
	return t
}
