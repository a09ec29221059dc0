package books

import (
	"context"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
)

// AuditActorJSON is who made a change.
type AuditActorJSON struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// AuditEntryJSON is an entry of GET /v9/ticketing/audit_log.json.
type AuditEntryJSON struct {
	ID          string         `json:"id"`
	Object      string         `json:"object"`
	Created     kit.Timestamp  `json:"created"`
	Environment string         `json:"environment"`
	ObjectType  string         `json:"object_type"`
	ObjectID    string         `json:"object_id"`
	Action      string         `json:"action"`
	Actor       AuditActorJSON `json:"actor"`
	Detail      map[string]any `json:"detail"`
}

func auditView(e invoicing.AuditEntry) AuditEntryJSON {
	d := e.Detail
	if d == nil {
		d = map[string]any{}
	}
	return AuditEntryJSON{ID: e.ID, Object: "audit_entry", Created: kit.Timestamp(e.CreatedAt), Environment: string(e.Environment),
		ObjectType: e.ObjectType, ObjectID: e.ObjectID, Action: e.Action,
		Actor: AuditActorJSON{Type: string(e.Actor.Type), ID: e.Actor.ID}, Detail: d}
}

// AuditRequest is GET /v9/ticketing/audit_log.json's query, as sent;
// ObjectID is nil when absent.
type AuditRequest struct {
	kit.ListRequest
	ObjectID *string
}

// AuditLog lists the audit log of the caller's account and environment,
// newest first (docs/books.md). The operator CLI reads it with a principal
// naming the account and environment.
func (b *Books) AuditLog(ctx context.Context, p account.Principal, req AuditRequest) (kit.ListJSON[AuditEntryJSON], error) {
	var l kit.ListParams
	f := invoicing.AuditFilter{ObjectID: req.ObjectID}
	return kit.RunList(ctx, b.DB.Read(), p, "books.AuditLog", "audit_log", "audit entry", req.ListRequest, &l, &f.Query,
		func(q Queries) (list.Page[invoicing.AuditEntry], error) { return q.AuditLog(ctx, f) },
		func(e invoicing.AuditEntry) (AuditEntryJSON, error) { return auditView(e), nil })
}
