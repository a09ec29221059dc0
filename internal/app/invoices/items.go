package invoices

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/money"
)

// MaxCollectionBulk bounds one bulk add to a collection.
const MaxCollectionBulk = 500

// BillableItemView is a billable item with its assignment and the invoices
// that currently cover it (customer key "" = invoiced without customer).
type BillableItemView struct {
	invoicing.BillableItem
	Invoiced map[string]string // customer key → invoice id
}

// BillableItem returns one of the caller's billable items.
func (s *Service) BillableItem(ctx context.Context, p account.Principal, id string) (BillableItemView, error) {
	return itemView(ctx, s.DB.Read(), p.AccountID, p.Environment, id)
}

// itemView is billable item id of acc and env with its claims, read
// through q.
func itemView(ctx context.Context, q Queries, acc string, env account.Environment, id string) (BillableItemView, error) {
	it, err := q.BillableItem(ctx, acc, env, id)
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

// itemChange is an ItemUpdate decoded: the values to set where the update
// names the field.
type itemChange struct {
	ItemUpdate
	customerID, collectionID *string
	split                    []invoicing.Share
}

// decode reads u's values (422 naming the field when one is not what it
// should be).
func (u ItemUpdate) decode(op string) (itemChange, error) {
	c := itemChange{ItemUpdate: u}
	if u.CustomerID == nil && u.Split == nil && u.CollectionID == nil {
		return c, apperr.E(op, apperr.Unprocessable, CodeNothingToUpdate,
			"send at least one of customer_id, split, billablable_collection_id")
	}
	if isSet(u.CustomerID) && isSet(u.Split) {
		return c, apperr.Validation(op, CodeCustomerAndSplit, "/split", "send either customer_id or split, not both")
	}
	if isSet(u.CustomerID) {
		var v string
		if err := json.Unmarshal(u.CustomerID, &v); err != nil || v == "" {
			return c, apperr.Validation(op, CodeInvalidCustomerID, "/customer_id", "customer_id must be a customer id string")
		}
		c.customerID = &v
	}
	if isSet(u.Split) {
		var err error
		if c.split, err = invoicing.DecodeSplit(u.Split); err != nil {
			return c, err
		}
	}
	if isSet(u.CollectionID) {
		var v string
		if err := json.Unmarshal(u.CollectionID, &v); err != nil || v == "" {
			return c, apperr.Validation(op, CodeInvalidCollectionID, "/billablable_collection_id",
				"billablable_collection_id must be a billable collection id string")
		}
		c.collectionID = &v
	}
	return c, nil
}

// assign is the assignment as of applied to c: customer_id and split
// replace each other.
func (c itemChange) assign(as invoicing.Assignment) invoicing.Assignment {
	if c.CustomerID != nil {
		as.CustomerID = c.customerID
		if c.customerID != nil {
			as.Split = nil
		}
	}
	if c.Split != nil {
		as.Split = c.split
		if c.split != nil {
			as.CustomerID = nil
		}
	}
	return as
}

// UpdateBillableItem assigns a customer or a split and/or a collection.
// customer_id and split replace each other. An item that is invoiced (for
// any customer) cannot change: 409, nothing written.
func (s *Service) UpdateBillableItem(ctx context.Context, claim idempotency.Claim, p account.Principal, id string, u ItemUpdate) (BillableItemView, error) {
	const op = "invoices.UpdateBillableItem"
	c, err := u.decode(op)
	if err != nil {
		return BillableItemView{}, err
	}
	err = s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		if err := q.LockItem(ctx, id); err != nil {
			return err
		}
		it, err := q.BillableItem(ctx, p.AccountID, p.Environment, id)
		if err != nil {
			return err
		}
		now, err := s.timeOf(ctx, q, it.TestClockID)
		if err != nil {
			return err
		}
		if err := notInvoiced(ctx, q, id); err != nil {
			return err
		}
		as := c.assign(it.Assignment)
		if err := checkCustomers(ctx, q, p, as, it.AmountCents); err != nil {
			return err
		}
		if u.CollectionID != nil {
			if c.collectionID != nil {
				if err := q.CollectionExists(ctx, p.AccountID, p.Environment, *c.collectionID); err != nil {
					return apperr.Validation(op, CodeUnknownCollection, "/billablable_collection_id",
						fmt.Sprintf("billable collection %q does not exist", *c.collectionID))
				}
				if it.CollectionID != nil && *it.CollectionID != *c.collectionID {
					return inOtherCollection(op, id)
				}
			}
			as.CollectionID = c.collectionID
		}
		return s.assigned(ctx, q, p, it, as, invoicing.AuditAssignmentChanged, now)
	})
	if err != nil {
		return BillableItemView{}, err
	}
	return s.BillableItem(ctx, p, id)
}

// checkCustomers refuses (422 naming the field) an assignment to a
// customer that does not exist or is erased, and a split that does not
// add up to the item's amount.
func checkCustomers(ctx context.Context, q Queries, p account.Principal, as invoicing.Assignment, amount money.Cents) error {
	const op = "invoices.UpdateBillableItem"
	check := func(field, what, id string) error {
		cu, err := q.Customer(ctx, p.AccountID, p.Environment, id)
		if err != nil {
			return apperr.Validation(op, CodeUnknownCustomer, field, fmt.Sprintf("%scustomer %q does not exist", what, id))
		}
		if cu.ErasedAt != nil {
			return apperr.Validation(op, CodeCustomerErased, field, fmt.Sprintf("%scustomer %q is erased (docs/privacy.md)", what, id))
		}
		return nil
	}
	if as.CustomerID != nil {
		if err := check("/customer_id", "", *as.CustomerID); err != nil {
			return err
		}
	}
	if as.Split == nil {
		return nil
	}
	if err := invoicing.ValidateSplit(as.Split, amount); err != nil {
		return err
	}
	for i, sh := range as.Split {
		if err := check(fmt.Sprintf("/split/%d/customer_id", i), fmt.Sprintf("split[%d].customer_id: ", i), sh.CustomerID); err != nil {
			return err
		}
	}
	return nil
}

// assigned stores item it's new assignment as, records the change in the
// books (action) and writes billable_item.updated, all at the item's time
// now.
func (s *Service) assigned(ctx context.Context, q Queries, p account.Principal, it invoicing.BillableItem, as invoicing.Assignment,
	action string, now time.Time) error {
	if err := q.SetAssignment(ctx, it.ID, as, now); err != nil {
		return err
	}
	detail := map[string]any{"before": assignmentDetail(it.Assignment), "after": assignmentDetail(as)}
	if err := s.books.Append(ctx, q, books.ItemChange(p, it.ID, action, detail, now)); err != nil {
		return err
	}
	ev := s.eventsAt(p.AccountID, p.Environment, now)
	if err := ev.billableItem(ctx, q, it.ID); err != nil {
		return err
	}
	return ev.write(ctx, q)
}

func isSet(raw json.RawMessage) bool { return raw != nil && string(raw) != "null" }

func inOtherCollection(op, id string) error {
	return apperr.E(op, apperr.Conflict, CodeItemInOtherCollection,
		fmt.Sprintf("billable item %s already belongs to another collection; an item can be in one collection only", id))
}

// notInvoiced answers 409 when the item is covered by a standing invoice.
func notInvoiced(ctx context.Context, q Queries, id string) error {
	claims, err := q.ItemClaims(ctx, id)
	if err != nil {
		return err
	}
	if len(claims) > 0 {
		return apperr.E("invoices.notInvoiced", apperr.Conflict, CodeItemAlreadyInvoiced,
			fmt.Sprintf("billable item %s is already invoiced; cancel the invoice before changing it", id))
	}
	return nil
}

// assignmentDetail is an assignment as the audit log shows it (the names
// of PUT billable_item).
func assignmentDetail(as invoicing.Assignment) map[string]any {
	out := map[string]any{"customer_id": as.CustomerID, "split": nil, "billablable_collection_id": as.CollectionID}
	if as.Split != nil {
		split := make([]map[string]any, 0, len(as.Split))
		for _, s := range as.Split {
			split = append(split, map[string]any{"customer_id": s.CustomerID, "amount_in_cents": int64(s.AmountInCents)})
		}
		out["split"] = split
	}
	return out
}

// CreateCollection creates an empty billable collection.
func (s *Service) CreateCollection(ctx context.Context, claim idempotency.Claim, p account.Principal) (string, error) {
	id := s.IDs.New("collection")
	err := s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		return q.InsertCollection(ctx, id, p.AccountID, p.Environment, s.Clock.Now())
	})
	return id, err
}

// AddToCollection adds items to a collection atomically: an unknown or
// foreign item (422), an item of another collection or an invoiced item
// (409) adds nothing. It returns the ids of all items of the collection.
func (s *Service) AddToCollection(ctx context.Context, claim idempotency.Claim, p account.Principal, collectionID string, itemIDs []string) ([]string, error) {
	const op = "invoices.AddToCollection"
	if len(itemIDs) == 0 || len(itemIDs) > MaxCollectionBulk {
		return nil, apperr.Validation(op, CodeInvalidBillableItemIDs, "/billable_item_ids",
			fmt.Sprintf("billable_item_ids must hold 1 to %d ids", MaxCollectionBulk))
	}
	var out []string
	err := s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		if err := q.CollectionExists(ctx, p.AccountID, p.Environment, collectionID); err != nil {
			return err
		}
		items, err := lockItems(ctx, q, p, itemIDs)
		if err != nil {
			return err
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
			now, err := s.timeOf(ctx, q, it.TestClockID)
			if err != nil {
				return err
			}
			as := it.Assignment
			as.CollectionID = &collectionID
			// Each item's audit entry and event at its own time.
			if err := s.assigned(ctx, q, p, it, as, invoicing.AuditAddedToCollection, now); err != nil {
				return err
			}
		}
		all, err := q.CollectionItems(ctx, collectionID)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, it := range all {
			out = append(out, it.ID)
		}
		return nil
	})
	return out, err
}

// lockItems locks and reads the caller's items ids (each once), or
// refuses the lot (422 naming every unknown one).
func lockItems(ctx context.Context, q Queries, p account.Principal, ids []string) ([]invoicing.BillableItem, error) {
	seen := map[string]bool{}
	var probs []apperr.FieldError
	var items []invoicing.BillableItem
	for i, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if err := q.LockItem(ctx, id); err != nil {
			return nil, err
		}
		it, err := q.BillableItem(ctx, p.AccountID, p.Environment, id)
		if apperr.KindOf(err) == apperr.NotFound {
			probs = append(probs, apperr.FieldError{Field: fmt.Sprintf("/billable_item_ids/%d", i), Message: fmt.Sprintf("billable item %q does not exist", id)})
			continue
		}
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	if len(probs) > 0 {
		return nil, apperr.E("invoices.AddToCollection", apperr.Unprocessable, CodeUnknownBillableItem, probs[0].Message).WithDetails(probs...)
	}
	return items, nil
}

// BillableItemsRequest is GET /v9/ticketing/billable_items.json's query,
// as sent; each filter is nil when absent.
type BillableItemsRequest struct {
	kit.ListRequest
	Invoiced, CustomerID, CollectionID *string
}

// BillableItems lists the caller's billable items of its environment,
// newest first by ordered_at, as GET /v5/ticketing/billable_item/{id}.json
// shows them.
func (s *Service) BillableItems(ctx context.Context, p account.Principal, req BillableItemsRequest) (kit.ListJSON[BillableItemJSON], error) {
	var l kit.ListParams
	f := invoicing.BillableItemFilter{CustomerID: req.CustomerID, CollectionID: req.CollectionID}
	if v := req.Invoiced; v != nil {
		switch *v {
		case "true", "false":
			b := *v == "true"
			f.Invoiced = &b
		default:
			l.Bad("invoiced", "invoiced must be true or false")
		}
	}
	return kit.RunList(ctx, s.DB.Read(), p, "invoices.BillableItems", "billable_items", "billable item", req.ListRequest, &l, &f.Query,
		func(q Queries) (list.Page[invoicing.BillableItem], error) { return q.BillableItems(ctx, f) },
		func(it invoicing.BillableItem) (BillableItemJSON, error) {
			claims, err := s.DB.Read().ItemClaims(ctx, it.ID)
			return BillableItemResponse(BillableItemView{BillableItem: it, Invoiced: claims}), err
		})
}

// CollectionJSON is a billable collection in a list.
type CollectionJSON struct {
	ID          string        `json:"id"`
	Object      string        `json:"object"`
	Environment string        `json:"environment"`
	Created     kit.Timestamp `json:"created"`
}

// Collections lists the caller's billable collections of its
// environment, newest first.
func (s *Service) Collections(ctx context.Context, p account.Principal, req kit.ListRequest) (kit.ListJSON[CollectionJSON], error) {
	var l kit.ListParams
	var f invoicing.CollectionFilter
	return kit.RunList(ctx, s.DB.Read(), p, "invoices.Collections", "billable_collections", "billable collection", req, &l, &f.Query,
		func(q Queries) (list.Page[invoicing.Collection], error) { return q.Collections(ctx, f) },
		func(c invoicing.Collection) (CollectionJSON, error) {
			return CollectionJSON{ID: c.ID, Object: "billable_collection", Environment: string(c.Environment), Created: kit.Timestamp(c.CreatedAt)}, nil
		})
}
