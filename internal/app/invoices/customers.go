package invoices

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/customers"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/invoicedoc/pdf"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
)

// CustomerJSON is a Customer (package customers: the privacy export shows
// the same).
type CustomerJSON = customers.CustomerJSON

// CustomerInput is the body of a customer creation.
type CustomerInput = invoicing.CustomerInput

// CustomerResponse is a Customer.
func CustomerResponse(c invoicing.Customer) CustomerJSON { return customers.View(c) }

// CreateCustomer validates and stores a customer. allowElectronic is true on
// /v9 only. Customers are immutable.
func (s *Service) CreateCustomer(ctx context.Context, claim idempotency.Claim, p account.Principal, in invoicing.CustomerInput, allowElectronic bool) (invoicing.Customer, error) {
	lines, e, err := invoicing.ParseCustomer(in, allowElectronic)
	if err != nil {
		return invoicing.Customer{}, err
	}
	printed := []printedText{}
	for i, l := range lines {
		printed = append(printed, printedText{fmt.Sprintf("/customer/address_lines/%d", i), l})
	}
	if e != nil {
		printed = append(printed, printedText{"/customer/electronic_invoicing/buyer_reference", e.BuyerReference})
	}
	if err := checkPrintable("invoices.CreateCustomer", printed...); err != nil {
		return invoicing.Customer{}, err
	}
	c := invoicing.Customer{ID: s.IDs.New("customer"), AccountID: p.AccountID, Environment: p.Environment,
		AddressLines: lines, Electronic: e, CreatedAt: s.Clock.Now()}
	err = s.DB.WriteClaimed(ctx, claim, func(q Queries) error { return q.InsertCustomer(ctx, c) })
	return c, err
}

// Customer returns one of the caller's customers.
func (s *Service) Customer(ctx context.Context, p account.Principal, id string) (invoicing.Customer, error) {
	return s.DB.Read().Customer(ctx, p.AccountID, p.Environment, id)
}

// Customers lists the caller's customers of its environment, newest
// first, as GET …/customers/{id}.json shows them.
func (s *Service) Customers(ctx context.Context, p account.Principal, req kit.ListRequest) (kit.ListJSON[CustomerJSON], error) {
	var l kit.ListParams
	var f invoicing.CustomerFilter
	return kit.RunList(ctx, s.DB.Read(), p, "invoices.Customers", "customers", "customer", req, &l, &f.Query,
		func(q Queries) (list.Page[invoicing.Customer], error) { return q.Customers(ctx, f) },
		func(c invoicing.Customer) (CustomerJSON, error) { return customers.View(c), nil })
}

// printedText is a partner's text that the PDF prints, with its field.
type printedText struct{ field, v string }

// checkPrintable refuses, when the text is accepted, a character the PDF
// cannot draw with its fonts (pdf.Drawable: a control character, or one no
// installed font covers), so that rendering never meets it
// (docs/invoicing.md, "Fonts and scripts").
func checkPrintable(op string, texts ...printedText) error {
	for _, t := range texts {
		if r, ok := pdf.Drawable(t.v); !ok {
			name := t.field[strings.LastIndexByte(t.field, '/')+1:]
			if _, err := strconv.Atoi(name); err == nil {
				name = strings.TrimPrefix(t.field, "/customer/")
			}
			return apperr.Validation(op, CodeUnprintableText, t.field,
				fmt.Sprintf("%s contains %U, which the PDF cannot print (no font has it, or it is a control character)", name, r))
		}
	}
	return nil
}
