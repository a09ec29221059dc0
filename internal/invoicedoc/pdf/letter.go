package pdf

import (
	"time"

	"github.com/boxesandglue/boxesandglue/backend/bag"
	"github.com/boxesandglue/boxesandglue/frontend"

	"github.com/farebox/farebox/internal/invoicedoc"
)

// Letter is a document that is no invoice, set with the invoices' engine,
// letterhead and footer: the confirmation of a subscription's cancellation
// (docs/books.md). It declares nothing to accounting software (no
// Factur-X), like a payment notice.
type Letter struct {
	Seller     invoicedoc.Seller
	Title      string      // the heading, also the PDF title with Reference
	Reference  string      // printed in the information block and the running header
	Date       time.Time   // the PDF's creation date
	Rows       [][2]string // label and value of the information block
	Paragraphs []string
	Test       bool // the red banner on every page
	TestText   string
}

// RenderLetter produces l as a PDF/A-3b file after a turn in q. It shares
// Render's engine (serialised, the node slabs emptied after each document).
func (q *Queue) RenderLetter(lt Letter) ([]byte, error) {
	return q.compose(func(fe *frontend.Document) error {
		return setupPDFA(fe, lt.Title+" "+lt.Reference, lt.Seller.Name, lt.Date)
	}, func(l *layout) error {
		return furniture(l, lt.Seller, lt.Test, lt.TestText, lt.Title+" "+lt.Reference)
	}, func(l *layout) {
		s := lt.Seller
		l.at(marginLeft, bag.MustSP("274mm"), l.text([]span{accent(s.Name)}, bag.MustSP("120mm"), 16, frontend.HAlignLeft))
		l.at(bag.MustSP("130mm"), bag.MustSP("274mm"), l.text([]span{muted(s.Address.Street + "\n" + s.Address.PostalCode + " " + s.Address.City +
			"\n" + s.ContactPhone + "\n" + s.ContactEmail)}, bag.MustSP("60mm"), 8, frontend.HAlignRight))
		l.y = bag.MustSP("240mm")
		l.block(l.text([]span{accent(lt.Title)}, contentWidth, 15, frontend.HAlignLeft), bag.MustSP("6mm"))
		for _, r := range lt.Rows {
			l.row([]column{{bag.MustSP("55mm"), frontend.HAlignLeft}, {bag.MustSP("115mm"), frontend.HAlignLeft}},
				[][]span{{muted(r[0])}, {plain(r[1])}}, 10, "")
		}
		l.y -= bag.MustSP("6mm")
		for _, p := range lt.Paragraphs {
			l.paragraphs(p, 10)
		}
	})
}
