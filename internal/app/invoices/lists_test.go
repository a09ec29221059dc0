package invoices_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/testtool"
)

// TestCustomerList: GET /v9/ticketing/customers.json pages the caller's
// customers newest first both ways, shows each as its GET does, keeps
// accounts and environments apart and refuses bad parameters.
func TestCustomerList(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		p := b.test
		var ids []string
		for i := range 5 {
			if i == 3 {
				b.clock.Advance(time.Minute)
			}
			ids = append(ids, b.customer(t, p, fmt.Sprintf("Kunde %d GmbH", i)).ID)
		}
		call := func(req kit.ListRequest) (kit.ListJSON[invoices.CustomerJSON], error) {
			return b.inv.Customers(b.ctx, p, req)
		}
		list := testtool.MustList(t, call)
		id := func(c invoices.CustomerJSON) string { return c.ID }
		testtool.WalkList(t, "all", append(testtool.ByNewest(ids[3:]), testtool.ByNewest(ids[:3])...), id, func(after, before string) kit.ListJSON[invoices.CustomerJSON] {
			return list(kit.ListRequest{Limit: "2", StartingAfter: after, EndingBefore: before})
		})
		later := b.clock.Now().Format(time.RFC3339)
		testtool.WalkList(t, "created[gte]", testtool.ByNewest(ids[3:]), id, func(after, before string) kit.ListJSON[invoices.CustomerJSON] {
			return list(kit.ListRequest{Limit: "1", StartingAfter: after, EndingBefore: before, CreatedGTE: later})
		})
		for _, c := range list(kit.ListRequest{Limit: "100"}).Data {
			got, err := b.inv.Customer(b.ctx, p, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if testtool.JSON(t, c) != testtool.JSON(t, invoices.CustomerResponse(got)) {
				t.Errorf("listed %s, GET %s", testtool.JSON(t, c), testtool.JSON(t, invoices.CustomerResponse(got)))
			}
		}
		liveCustomer := b.customer(t, b.live, "Live GmbH").ID
		b.newAccount(t, "acc_other")
		other := account.Principal{AccountID: "acc_other", Environment: account.Test, KeyID: "key_other"}
		otherCustomer := b.customer(t, other, "Andere GmbH").ID
		for _, c := range []struct {
			p    account.Principal
			want string
		}{{b.live, liveCustomer}, {other, otherCustomer}} {
			l, err := b.inv.Customers(b.ctx, c.p, kit.ListRequest{})
			if err != nil || len(l.Data) != 1 || l.Data[0].ID != c.want || l.HasMore {
				t.Errorf("%s: %+v %v, want only %s", c.p.AccountID, l, err, c.want)
			}
		}
		testtool.CheckBadLists(t, call,
			[]testtool.ListCase[kit.ListRequest]{
				{Req: kit.ListRequest{StartingAfter: liveCustomer}, Field: "starting_after"},
				{Req: kit.ListRequest{EndingBefore: otherCustomer}, Field: "ending_before"},
				{Req: kit.ListRequest{Limit: "0"}, Field: "limit"},
				{Req: kit.ListRequest{CreatedGTE: "2026"}, Field: "created[gte]"},
			})
	})
}

// TestInvoiceList: GET /v9/ticketing/invoices.json pages the caller's
// documents newest first both ways, filters by customer, number and
// created range, shows each as its GET does, keeps accounts and
// environments apart and refuses bad parameters.
func TestInvoiceList(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		p := b.test
		c1, c2 := b.customer(t, p, "Erste GmbH").ID, b.customer(t, p, "Zweite GmbH").ID
		var invs []invoicing.Invoice
		for i, c := range []string{c1, c2, c1, c1} {
			if i == 2 {
				b.clock.Advance(time.Minute)
			}
			invs = append(invs, b.invoiceFor(t, p, c))
		}
		ids := func(ix ...int) (out []string) {
			for _, i := range ix {
				out = append(out, invs[i].ID)
			}
			return out
		}
		call := func(req invoices.InvoicesRequest) (kit.ListJSON[invoices.InvoiceJSON], error) {
			return b.inv.Invoices(b.ctx, p, req)
		}
		list := testtool.MustList(t, call)
		id := func(v invoices.InvoiceJSON) string { return v.InvoiceID }
		all := append(testtool.ByNewest(ids(2, 3)), testtool.ByNewest(ids(0, 1))...)
		testtool.WalkList(t, "all", all, id, func(after, before string) kit.ListJSON[invoices.InvoiceJSON] {
			return list(invoices.InvoicesRequest{ListRequest: kit.ListRequest{Limit: "1", StartingAfter: after, EndingBefore: before}})
		})
		testtool.WalkList(t, "customer", append(testtool.ByNewest(ids(2, 3)), invs[0].ID), id, func(after, before string) kit.ListJSON[invoices.InvoiceJSON] {
			return list(invoices.InvoicesRequest{CustomerID: &c1, ListRequest: kit.ListRequest{Limit: "2", StartingAfter: after, EndingBefore: before}})
		})
		later := b.clock.Now().Format(time.RFC3339)
		testtool.WalkList(t, "created[lt]", testtool.ByNewest(ids(0, 1)), id, func(after, before string) kit.ListJSON[invoices.InvoiceJSON] {
			return list(invoices.InvoicesRequest{ListRequest: kit.ListRequest{Limit: "1", StartingAfter: after, EndingBefore: before, CreatedLT: later}})
		})
		if l := list(invoices.InvoicesRequest{Number: &invs[1].Number}); len(l.Data) != 1 || l.Data[0].InvoiceID != invs[1].ID || l.HasMore {
			t.Errorf("number %s: %+v", invs[1].Number, l)
		}
		for _, v := range list(invoices.InvoicesRequest{ListRequest: kit.ListRequest{Limit: "100"}}).Data {
			inv, err := b.inv.Invoice(b.ctx, p, v.InvoiceID)
			if err != nil {
				t.Fatal(err)
			}
			if testtool.JSON(t, v) != testtool.JSON(t, b.inv.Response(inv)) {
				t.Errorf("listed %s, GET %s", testtool.JSON(t, v), testtool.JSON(t, b.inv.Response(inv)))
			}
		}
		liveInvoice := b.invoiceFor(t, b.live, b.customer(t, b.live, "Live GmbH").ID)
		b.newAccount(t, "acc_other")
		other := account.Principal{AccountID: "acc_other", Environment: account.Test, KeyID: "key_other"}
		otherInvoice := b.invoiceFor(t, other, b.customer(t, other, "Andere GmbH").ID)
		for _, c := range []struct {
			p    account.Principal
			want string
		}{{b.live, liveInvoice.ID}, {other, otherInvoice.ID}} {
			l, err := b.inv.Invoices(b.ctx, c.p, invoices.InvoicesRequest{})
			if err != nil || len(l.Data) != 1 || l.Data[0].InvoiceID != c.want || l.HasMore {
				t.Errorf("%s: %+v %v, want only %s", c.p.AccountID, l, err, c.want)
			}
		}
		// Another environment's number is no match here.
		if l := list(invoices.InvoicesRequest{Number: &liveInvoice.Number}); len(l.Data) != 0 {
			t.Errorf("the live invoice's number lists %+v in test", l.Data)
		}
		page := func(r kit.ListRequest) invoices.InvoicesRequest { return invoices.InvoicesRequest{ListRequest: r} }
		testtool.CheckBadLists(t, call,
			[]testtool.ListCase[invoices.InvoicesRequest]{
				{Req: page(kit.ListRequest{StartingAfter: liveInvoice.ID}), Field: "starting_after"},
				{Req: page(kit.ListRequest{EndingBefore: otherInvoice.ID}), Field: "ending_before"},
				{Req: page(kit.ListRequest{StartingAfter: c1}), Field: "starting_after"},
				{Req: page(kit.ListRequest{Limit: "100000"}), Field: "limit"},
				{Req: page(kit.ListRequest{CreatedGTE: "12:00"}), Field: "created[gte]"},
			})
	})
}

// invoiceFor stores a billable item of p and invoices it to customer.
func (b *testBundle) invoiceFor(t *testing.T, p account.Principal, customer string) invoicing.Invoice {
	t.Helper()
	item := b.itemOf(t, p)
	if _, err := b.update(p, item, "customer_id", `"`+customer+`"`); err != nil {
		t.Fatal(err)
	}
	return b.invoice(t, p, item, customer)
}
