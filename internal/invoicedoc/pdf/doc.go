// Package pdf renders an invoicedoc.Document as a German invoice PDF/A-3b:
// letterhead, recipient from address_lines, number and dates, the service
// period with its label (Leistungszeitpunkt / Leistungszeitraum), the custom
// texts with tags replaced, an item table with net and gross per line, the
// totals per VAT rate, passive split participants, payment details and a
// footer with the seller's tax and contact data. Test documents carry a red
// TEST banner on every page; cancellations read as Stornorechnung with the
// cancelled invoice's number; payment notices say they are no invoice.
//
// When the CII XML is given it is embedded byte for byte as the Factur-X /
// ZUGFeRD attachment factur-x.xml (AFRelationship Alternative, catalog /AF)
// and the XMP metadata declares PDF/A-3 conformance B plus the Factur-X
// extension schema (conformance level EN 16931).
//
// Typesetting uses github.com/boxesandglue/boxesandglue (API still under
// development; pinned v0.2.14 and used only in this package). DejaVu Sans
// regular and bold are embedded with go:embed and subset into each PDF; see
// fonts/LICENSE; each is parsed once per process. Other scripts (Arabic,
// Hebrew, CJK, emoji, mathematical letters) are set by text.go with bidi
// levels (internal/uba), textshape and Debian's fonts read from the
// font directory (SetFontDir); Drawable tells the API which text cannot be
// printed. A panic while rendering is returned as pdf_render_failed. boxesandglue keeps
// package-level state (node slabs that engine.go empties after every
// document), so Render serialises on a mutex: one process renders one PDF
// at a time. Lines are broken by wrap.go (greedy, linear, never wider than
// the column, overlong words cut without a hyphen), not by the library. Colours are sRGB with an sRGB output intent. Limits: A4
// portrait only, no logo, no veraPDF check in the tests (structure is
// asserted with poppler tools, pdfcpu and PDFBox Preflight instead).
package pdf
