package app

import (
	"github.com/farebox/farebox/internal/app/customers"
	"github.com/farebox/farebox/internal/invoicing"
)

// CustomerJSON is a Customer as the privacy export shows it (package
// customers; invoicing's answers are package invoices').
type CustomerJSON = customers.CustomerJSON

func customerView(c invoicing.Customer) CustomerJSON { return customers.View(c) }
