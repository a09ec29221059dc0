package fareexport

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/catalog"
)

// NeTEx fare delivery (docs/fares.md "NeTEx"). One PublicationDelivery with
// one CompositeFrame holding a ResourceFrame (the seller) and a FareFrame:
//
//   - a FareZone per area, with its polygon as GML (gml:Polygon, or
//     gml:MultiSurface for a MultiPolygon);
//   - usageParameters: a UserProfile per rider the products name (adult,
//     child, the job ticket's employee) and a UsageValidityPeriod per
//     product (its duration, the day ticket's end of the fare day, the
//     calendar month of the national ticket);
//   - a PreassignedFareProduct per product: its zone, rider and validity
//     as one GenericParameterAssignment, its price as a FareProductPrice,
//     its sales window (sold_from, sold_until) as ValidBetween;
//   - a SalesOfferPackage per product: how it is sold (a mobile device;
//     the job ticket through the employer).
//
// Ids are <codespace>:<NeTEx type>:<farebox id>; every object has the
// catalog's version, so a planner sees a new version after an import. The
// delivery is written in that order in one pass per section over the
// loaded catalog and validates against NeTEx_publication.xsd (the test
// runs xmllint on every export).

const netexNS = "http://www.netex.org.uk/netex"

// xw writes XML to a buffered writer, remembering the first error.
type xw struct {
	w   *bufio.Writer
	err error
}

func (x *xw) raw(s string) {
	if x.err == nil {
		_, x.err = x.w.WriteString(s)
	}
}

func (x *xw) rawb(b []byte) {
	if x.err == nil {
		_, x.err = x.w.Write(b)
	}
}

// text writes s escaped for XML text and attribute values, straight into
// the buffer (xml.EscapeText would copy s first).
func (x *xw) text(s string) {
	start := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&quot;"
		case '\t':
			esc = "&#x9;"
		case '\n':
			esc = "&#xA;"
		case '\r':
			esc = "&#xD;"
		default:
			c := s[i]
			if c >= 0x20 && c < utf8.RuneSelf {
				continue
			}
			// A control character or a byte of invalid UTF-8 cannot be
			// in an XML document: it is written as U+FFFD.
			r, size := utf8.DecodeRuneInString(s[i:])
			if c >= 0x20 && r != utf8.RuneError {
				i += size - 1
				continue
			}
			x.raw(s[start:i])
			x.raw("\uFFFD")
			start = i + size
			i += size - 1
			continue
		}
		x.raw(s[start:i])
		x.raw(esc)
		start = i + 1
	}
	x.raw(s[start:])
}

// attr writes ` name="value"` with value escaped.
func (x *xw) attr(name, value string) {
	x.raw(" ")
	x.raw(name)
	x.raw(`="`)
	x.text(value)
	x.raw(`"`)
}

// elem writes <name>text</name> when text is not empty.
func (x *xw) elem(name, text string) {
	if text == "" {
		return
	}
	x.raw("<")
	x.raw(name)
	x.raw(">")
	x.text(text)
	x.raw("</")
	x.raw(name)
	x.raw(">")
}

// netex is one export in progress.
type netex struct {
	xw
	src     Source
	version string
	areas   []*catalog.AreaEntry
	buf     []byte // scratch for numbers
}

// id writes the attribute name="<codespace>:<kind>:<id>".
func (n *netex) id(name, kind, id string) {
	n.raw(" ")
	n.raw(name)
	n.raw(`="`)
	n.text(n.src.Codespace)
	n.raw(":")
	n.raw(kind)
	n.raw(":")
	n.text(idPart(id))
	n.raw(`"`)
}

// open writes <kind version id ...> for an object of this export.
func (n *netex) open(kind, id string, extra ...string) {
	n.raw("<")
	n.raw(kind)
	n.attr("version", n.version)
	n.id("id", kind, id)
	for i := 0; i+1 < len(extra); i += 2 {
		n.attr(extra[i], extra[i+1])
	}
	n.raw(">")
}

func (n *netex) ref(kind, id string) {
	n.raw("<")
	n.raw(kind)
	n.raw("Ref")
	n.attr("version", n.version)
	n.id("ref", kind, id)
	n.raw("/>")
}

// WriteNeTEx writes src as a NeTEx PublicationDelivery to w. An AreaID
// naming no area writes nothing and returns ErrNoArea.
func WriteNeTEx(w io.Writer, src Source) error {
	areas, ok := src.Areas()
	if !ok {
		return ErrNoArea
	}
	n := &netex{xw: xw{w: bufio.NewWriterSize(w, 32<<10)}, src: src, version: strconv.FormatInt(src.Version, 10), areas: areas}
	ts := src.UpdatedAt.UTC().Format(time.RFC3339)
	n.raw(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	n.raw(`<PublicationDelivery xmlns="` + netexNS + `" xmlns:gml="http://www.opengis.net/gml/3.2" version="1.1">`)
	n.elem("PublicationTimestamp", ts)
	n.elem("ParticipantRef", src.Codespace)
	n.elem("Description", fmt.Sprintf("Fares of %s, catalog version %d", src.Seller, src.Version))
	n.raw("<dataObjects>")
	n.open("CompositeFrame", "fares")
	n.raw("<ValidBetween>")
	n.elem("FromDate", ts)
	n.raw("</ValidBetween>")
	n.elem("Name", "Fares of "+src.Seller)
	n.raw(`<codespaces><Codespace id="` + idPart(src.Codespace) + `">`)
	n.elem("Xmlns", src.Codespace)
	n.elem("Description", src.Seller)
	n.raw("</Codespace></codespaces>")
	n.raw(`<FrameDefaults><DefaultCodespaceRef ref="` + idPart(src.Codespace) + `"/>`)
	n.raw("<DefaultLocale><TimeZone>Europe/Berlin</TimeZone><DefaultLanguage>de</DefaultLanguage></DefaultLocale>")
	n.raw("<DefaultCurrency>EUR</DefaultCurrency></FrameDefaults><frames>")
	n.resourceFrame()
	n.fareFrame()
	n.raw("</frames></CompositeFrame></dataObjects></PublicationDelivery>\n")
	if n.err != nil {
		return n.err
	}
	return n.w.Flush()
}

func (n *netex) resourceFrame() {
	n.open("ResourceFrame", "fares")
	n.raw("<organisations>")
	n.open("Operator", "seller")
	n.elem("Name", n.src.Seller)
	n.raw("</Operator></organisations></ResourceFrame>")
}

func (n *netex) fareFrame() {
	n.open("FareFrame", "fares")
	n.raw("<fareZones>")
	for _, a := range n.areas {
		n.fareZone(a)
	}
	n.raw("</fareZones><usageParameters>")
	n.userProfiles()
	n.eachProduct(n.validityPeriod)
	n.raw("</usageParameters><fareProducts>")
	n.eachProduct(n.product)
	n.raw("</fareProducts><salesOfferPackages>")
	n.eachProduct(n.salesOfferPackage)
	n.raw("</salesOfferPackages></FareFrame>")
}

func (n *netex) eachProduct(f func(a *catalog.AreaEntry, p *catalog.Product)) {
	for _, a := range n.areas {
		for _, p := range a.Products {
			if n.err != nil {
				return
			}
			f(a, p)
		}
	}
}

func (n *netex) fareZone(a *catalog.AreaEntry) {
	n.open("FareZone", a.ID)
	n.elem("Name", a.Name)
	n.elem("ShortName", a.LocalZoneName)
	n.gml(a)
	n.raw("</FareZone>")
}

// gml writes the area's shape: a gml:Polygon, or a gml:MultiSurface of
// them for a MultiPolygon; posList is latitude then longitude (WGS 84).
func (n *netex) gml(a *catalog.AreaEntry) {
	polys := a.Shape.Polygons()
	gid := idPart(a.ID)
	if len(polys) == 1 {
		n.polygon(polys[0], gid)
		return
	}
	n.raw(`<gml:MultiSurface gml:id="` + gid + `" srsName="EPSG:4326">`)
	for i, p := range polys {
		n.raw("<gml:surfaceMember>")
		n.polygon(p, gid+"-"+strconv.Itoa(i))
		n.raw("</gml:surfaceMember>")
	}
	n.raw("</gml:MultiSurface>")
}

func (n *netex) polygon(rings [][]catalog.Point, gid string) {
	n.raw(`<gml:Polygon gml:id="p-` + gid + `" srsName="EPSG:4326">`)
	for i, ring := range rings {
		if i == 0 {
			n.raw("<gml:exterior>")
		} else {
			n.raw("<gml:interior>")
		}
		n.raw("<gml:LinearRing><gml:posList>")
		for j, pt := range ring {
			b := n.buf[:0]
			if j > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendFloat(b, pt.Lat, 'f', -1, 64)
			b = append(b, ' ')
			b = strconv.AppendFloat(b, pt.Lon, 'f', -1, 64)
			n.rawb(b)
			n.buf = b
		}
		n.raw("</gml:posList></gml:LinearRing>")
		if i == 0 {
			n.raw("</gml:exterior>")
		} else {
			n.raw("</gml:interior>")
		}
	}
	n.raw("</gml:Polygon>")
}

// userProfiles writes a UserProfile for each rider the exported products
// name.
func (n *netex) userProfiles() {
	used := map[string]bool{}
	n.eachProduct(func(_ *catalog.AreaEntry, p *catalog.Product) { used[RiderOf(p).ID] = true })
	for _, r := range Riders {
		if !used[r.ID] {
			continue
		}
		n.open("UserProfile", r.ID)
		n.elem("Name", r.Name)
		n.elem("UserType", r.UserType)
		if r == RiderChild {
			n.elem("MaximumAge", "14")
		}
		n.raw("</UserProfile>")
	}
}

// validityPeriod writes how long a ticket of p is valid once started.
func (n *netex) validityPeriod(_ *catalog.AreaEntry, p *catalog.Product) {
	n.open("UsageValidityPeriod", p.ID)
	switch {
	case p.DurationDefinition == catalog.DurationCalendarMonth:
		n.elem("ValidityPeriodType", "monthlyPass")
		n.elem("UsageTrigger", "startOfPeriod")
		n.elem("UsageEnd", "endOfCalendarPeriod")
		n.elem("StandardDuration", "P1M")
	case p.TicketType == catalog.TicketDay:
		n.elem("ValidityPeriodType", "dayPass")
		n.elem("UsageTrigger", "activation")
		n.elem("UsageEnd", "endOfFareDay")
		n.duration(p)
	default:
		n.elem("ValidityPeriodType", "singleTrip")
		n.elem("UsageTrigger", "activation")
		n.elem("UsageEnd", "standardDuration")
		n.duration(p)
	}
	n.raw("</UsageValidityPeriod>")
}

func (n *netex) duration(p *catalog.Product) {
	if p.DurationInMinutes != nil {
		n.elem("StandardDuration", "PT"+strconv.Itoa(*p.DurationInMinutes)+"M")
	}
}

// productTypes maps ticket types to NeTEx's PreassignedFareProduct types.
var productTypes = map[string]string{catalog.TicketSingle: "timeLimitedSingleTrip", catalog.TicketDay: "dayPass", catalog.TicketMonth: "periodPass"}

func (n *netex) validBetween(p *catalog.Product) {
	if p.SoldFrom == nil && p.SoldUntil == nil {
		return
	}
	n.raw("<ValidBetween>")
	if p.SoldFrom != nil {
		n.elem("FromDate", p.SoldFrom.UTC().Format(time.RFC3339))
	}
	if p.SoldUntil != nil {
		n.elem("ToDate", p.SoldUntil.UTC().Format(time.RFC3339))
	}
	n.raw("</ValidBetween>")
}

func (n *netex) product(a *catalog.AreaEntry, p *catalog.Product) {
	n.open("PreassignedFareProduct", p.ID)
	n.validBetween(p)
	n.elem("Name", p.LocalTicketName)
	n.elem("Description", p.LocalValidityDescription)
	n.elem("ChargingMomentType", "beforeTravel")
	n.ref("Operator", "seller")
	n.raw("<validityParameterAssignments>")
	n.open("GenericParameterAssignment", p.ID, "order", "1")
	n.elem("LimitationGroupingType", "AND")
	n.raw("<limitations>")
	n.ref("UserProfile", RiderOf(p).ID)
	n.ref("UsageValidityPeriod", p.ID)
	n.raw("</limitations>")
	n.elem("ValidityParameterGroupingType", "AND")
	n.raw("<validityParameters>")
	n.ref("FareZone", a.ID)
	n.raw("</validityParameters></GenericParameterAssignment></validityParameterAssignments><prices>")
	n.open("FareProductPrice", p.ID)
	n.elem("Amount", Amount(int64(p.PriceInCents)))
	n.elem("Currency", p.Currency)
	n.raw("</FareProductPrice></prices>")
	n.elem("ProductType", productTypes[p.TicketType])
	n.raw("</PreassignedFareProduct>")
}

func (n *netex) salesOfferPackage(_ *catalog.AreaEntry, p *catalog.Product) {
	n.open("SalesOfferPackage", p.ID)
	n.validBetween(p)
	n.elem("Name", p.LocalTicketName)
	n.raw("<distributionAssignments>")
	n.open("DistributionAssignment", p.ID, "order", "1")
	if p.Restricted {
		n.elem("Description", "Sold to employers for their employees (job ticket): ask the operator of the service.")
		n.elem("DistributionChannelType", "other")
	} else {
		n.elem("Description", "Sold in the apps of farebox's partners; the ticket is shown on the traveller's phone.")
		n.elem("DistributionChannelType", "mobileDevice")
	}
	n.raw("</DistributionAssignment></distributionAssignments><salesOfferPackageElements>")
	n.open("SalesOfferPackageElement", p.ID, "order", "1")
	n.ref("PreassignedFareProduct", p.ID)
	n.raw("</SalesOfferPackageElement></salesOfferPackageElements></SalesOfferPackage>")
}
