package app

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/store"
)

// MaxCollectionBulk bounds one bulk add to a collection.
const MaxCollectionBulk = 500

// CreateCustomer validates and stores a customer. allowElectronic is true on
// /v9 only. Customers are immutable.
func (a *App) CreateCustomer(ctx context.Context, p account.Principal, in invoicing.CustomerInput, allowElectronic bool) (invoicing.Customer, error) {
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
	if err := checkPrintable("app.CreateCustomer", printed...); err != nil {
		return invoicing.Customer{}, err
	}
	c := invoicing.Customer{ID: a.IDs.New("customer"), AccountID: p.AccountID, Environment: p.Environment,
		AddressLines: lines, Electronic: e, CreatedAt: a.clock.Now()}
	err = a.store.WriteClaimed(ctx, idempotency.ClaimOf(ctx), func(q store.Q) error { return q.InsertCustomer(ctx, c) })
	return c, err
}

// Customer returns one of the caller's customers.
func (a *App) Customer(ctx context.Context, p account.Principal, id string) (invoicing.Customer, error) {
	return a.store.Read().Customer(ctx, p.AccountID, p.Environment, id)
}

// BillableItemView is a billable item with its assignment and the invoices
// that currently cover it (customer key "" = invoiced without customer).
type BillableItemView struct {
	invoicing.BillableItem
	Invoiced map[string]string // customer key → invoice id
}

// BillableItem returns one of the caller's billable items.
func (a *App) BillableItem(ctx context.Context, p account.Principal, id string) (BillableItemView, error) {
	q := a.store.Read()
	it, err := q.BillableItem(ctx, p.AccountID, p.Environment, id)
	if err != nil {
		return BillableItemView{}, err
	}
	claims, err := q.ItemClaims(ctx, id)
	return BillableItemView{BillableItem: it, Invoiced: claims}, err
}

// ItemUpdate is PUT …/billable_item/{id}.json. Each field is nil when
// absent, JSON null to clear, or a value to set.
type ItemUpdate struct {
	CustomerID   json.RawMessage
	Split        json.RawMessage
	CollectionID json.RawMessage
}

// UpdateBillableItem assigns a customer or a split and/or a collection.
// customer_id and split replace each other. An item that is invoiced (for
// any customer) cannot change: 409, nothing written.
func (a *App) UpdateBillableItem(ctx context.Context, p account.Principal, id string, u ItemUpdate) (BillableItemView, error) {
	const op = "app.UpdateBillableItem"
	if u.CustomerID == nil && u.Split == nil && u.CollectionID == nil {
		return BillableItemView{}, apperr.E(op, apperr.Unprocessable, CodeNothingToUpdate,
			"send at least one of customer_id, split, billablable_collection_id")
	}
	if isSet(u.CustomerID) && isSet(u.Split) {
		return BillableItemView{}, apperr.Validation(op, CodeCustomerAndSplit, "/split",
			"send either customer_id or split, not both")
	}
	var customerID, collectionID *string
	var split []invoicing.Share
	if isSet(u.CustomerID) {
		var s string
		if err := json.Unmarshal(u.CustomerID, &s); err != nil || s == "" {
			return BillableItemView{}, apperr.Validation(op, CodeInvalidCustomerID, "/customer_id", "customer_id must be a customer id string")
		}
		customerID = &s
	}
	if isSet(u.Split) {
		var err error
		if split, err = invoicing.DecodeSplit(u.Split); err != nil {
			return BillableItemView{}, err
		}
	}
	if isSet(u.CollectionID) {
		var s string
		if err := json.Unmarshal(u.CollectionID, &s); err != nil || s == "" {
			return BillableItemView{}, apperr.Validation(op, CodeInvalidCollectionID, "/billablable_collection_id",
				"billablable_collection_id must be a billable collection id string")
		}
		collectionID = &s
	}
	err := a.store.WriteClaimed(ctx, idempotency.ClaimOf(ctx), func(q store.Q) error {
		if err := q.LockItem(ctx, id); err != nil {
			return err
		}
		it, err := q.BillableItem(ctx, p.AccountID, p.Environment, id)
		if err != nil {
			return err
		}
		now, err := a.timeOf(ctx, q, it.TestClockID)
		if err != nil {
			return err
		}
		if err := notInvoiced(ctx, q, id); err != nil {
			return err
		}
		as := it.Assignment
		if u.CustomerID != nil {
			as.CustomerID = customerID
			if customerID != nil {
				as.Split = nil
			}
		}
		if u.Split != nil {
			as.Split = split
			if split != nil {
				as.CustomerID = nil
			}
		}
		if as.CustomerID != nil {
			cu, err := q.Customer(ctx, p.AccountID, p.Environment, *as.CustomerID)
			if err != nil {
				return apperr.Validation(op, CodeUnknownCustomer, "/customer_id", fmt.Sprintf("customer %q does not exist", *as.CustomerID))
			}
			if cu.ErasedAt != nil {
				return apperr.Validation(op, CodeCustomerErased, "/customer_id", fmt.Sprintf("customer %q is erased (docs/privacy.md)", *as.CustomerID))
			}
		}
		if as.Split != nil {
			if err := invoicing.ValidateSplit(as.Split, it.AmountCents); err != nil {
				return err
			}
			for i, s := range as.Split {
				cu, err := q.Customer(ctx, p.AccountID, p.Environment, s.CustomerID)
				if err != nil {
					return apperr.Validation(op, CodeUnknownCustomer, fmt.Sprintf("/split/%d/customer_id", i),
						fmt.Sprintf("split[%d].customer_id: customer %q does not exist", i, s.CustomerID))
				}
				if cu.ErasedAt != nil {
					return apperr.Validation(op, CodeCustomerErased, fmt.Sprintf("/split/%d/customer_id", i),
						fmt.Sprintf("split[%d].customer_id: customer %q is erased (docs/privacy.md)", i, s.CustomerID))
				}
			}
		}
		if u.CollectionID != nil {
			if collectionID != nil {
				if err := q.CollectionExists(ctx, p.AccountID, p.Environment, *collectionID); err != nil {
					return apperr.Validation(op, CodeUnknownCollection, "/billablable_collection_id",
						fmt.Sprintf("billable collection %q does not exist", *collectionID))
				}
				if it.CollectionID != nil && *it.CollectionID != *collectionID {
					return inOtherCollection(op, id)
				}
			}
			as.CollectionID = collectionID
		}
		if err := q.SetAssignment(ctx, id, as, now); err != nil {
			return err
		}
		if err := a.audit(ctx, q, p, id, invoicing.AuditAssignmentChanged,
			map[string]any{"before": assignmentDetail(it.Assignment), "after": assignmentDetail(as)}, now); err != nil {
			return err
		}
		ev := a.eventsAt(p.AccountID, p.Environment, now)
		if err := ev.billableItem(ctx, q, id); err != nil {
			return err
		}
		return ev.write(ctx, q)
	})
	if err != nil {
		return BillableItemView{}, err
	}
	return a.BillableItem(ctx, p, id)
}

func isSet(raw json.RawMessage) bool { return raw != nil && string(raw) != "null" }

func inOtherCollection(op, id string) error {
	return apperr.E(op, apperr.Conflict, CodeItemInOtherCollection,
		fmt.Sprintf("billable item %s already belongs to another collection; an item can be in one collection only", id))
}

// notInvoiced answers 409 when the item is covered by a standing invoice.
func notInvoiced(ctx context.Context, q store.Q, id string) error {
	claims, err := q.ItemClaims(ctx, id)
	if err != nil {
		return err
	}
	if len(claims) > 0 {
		return apperr.E("app.notInvoiced", apperr.Conflict, CodeItemAlreadyInvoiced,
			fmt.Sprintf("billable item %s is already invoiced; cancel the invoice before changing it", id))
	}
	return nil
}

// CreateCollection creates an empty billable collection.
func (a *App) CreateCollection(ctx context.Context, p account.Principal) (string, error) {
	id := a.IDs.New("collection")
	err := a.store.WriteClaimed(ctx, idempotency.ClaimOf(ctx), func(q store.Q) error {
		return q.InsertCollection(ctx, id, p.AccountID, p.Environment, a.clock.Now())
	})
	return id, err
}

// AddToCollection adds items to a collection atomically: an unknown or
// foreign item (422), an item of another collection or an invoiced item
// (409) adds nothing. It returns the ids of all items of the collection.
func (a *App) AddToCollection(ctx context.Context, p account.Principal, collectionID string, itemIDs []string) ([]string, error) {
	const op = "app.AddToCollection"
	if len(itemIDs) == 0 || len(itemIDs) > MaxCollectionBulk {
		return nil, apperr.Validation(op, CodeInvalidBillableItemIDs, "/billable_item_ids",
			fmt.Sprintf("billable_item_ids must hold 1 to %d ids", MaxCollectionBulk))
	}
	var out []string
	err := a.store.WriteClaimed(ctx, idempotency.ClaimOf(ctx), func(q store.Q) error {
		if err := q.CollectionExists(ctx, p.AccountID, p.Environment, collectionID); err != nil {
			return err
		}
		seen := map[string]bool{}
		var probs []apperr.FieldError
		var items []invoicing.BillableItem
		for i, id := range itemIDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			if err := q.LockItem(ctx, id); err != nil {
				return err
			}
			it, err := q.BillableItem(ctx, p.AccountID, p.Environment, id)
			if apperr.KindOf(err) == apperr.NotFound {
				probs = append(probs, apperr.FieldError{Field: fmt.Sprintf("/billable_item_ids/%d", i), Message: fmt.Sprintf("billable item %q does not exist", id)})
				continue
			}
			if err != nil {
				return err
			}
			items = append(items, it)
		}
		if len(probs) > 0 {
			return apperr.E(op, apperr.Unprocessable, CodeUnknownBillableItem, probs[0].Message).WithDetails(probs...)
		}
		for _, it := range items {
			if it.CollectionID != nil && *it.CollectionID != collectionID {
				return inOtherCollection(op, it.ID)
			}
			if it.CollectionID != nil {
				continue
			}
			if err := notInvoiced(ctx, q, it.ID); err != nil {
				return err
			}
			now, err := a.timeOf(ctx, q, it.TestClockID)
			if err != nil {
				return err
			}
			as := it.Assignment
			as.CollectionID = &collectionID
			if err := q.SetAssignment(ctx, it.ID, as, now); err != nil {
				return err
			}
			if err := a.audit(ctx, q, p, it.ID, invoicing.AuditAddedToCollection,
				map[string]any{"before": assignmentDetail(it.Assignment), "after": assignmentDetail(as)}, now); err != nil {
				return err
			}
			ev := a.eventsAt(p.AccountID, p.Environment, now) // each item's event at its time
			if err := ev.billableItem(ctx, q, it.ID); err != nil {
				return err
			}
			if err := ev.write(ctx, q); err != nil {
				return err
			}
		}
		all, err := q.CollectionItems(ctx, collectionID)
		if err != nil {
			return err
		}
		for _, it := range all {
			out = append(out, it.ID)
		}
		return nil
	})
	return out, err
}
