package webhooks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/webhook"
)

// EndpointRequest is the body of creating or updating an endpoint;
// nil fields are left as they are (update) or take their default (create).
type EndpointRequest struct {
	URL           *string   `json:"url"`
	EnabledEvents *[]string `json:"enabled_events"`
	Description   *string   `json:"description"`
	Disabled      *bool     `json:"disabled"`
}

// EndpointJSON is an endpoint as the API shows it. Secret is shown
// when the endpoint is created and when its secret is rotated, never
// again.
type EndpointJSON struct {
	ID                      string         `json:"id"`
	Object                  string         `json:"object"`
	URL                     string         `json:"url"`
	Description             string         `json:"description"`
	EnabledEvents           []string       `json:"enabled_events"`
	Environment             string         `json:"environment"`
	Status                  string         `json:"status"`
	DisabledReason          *string        `json:"disabled_reason"`
	DisabledAt              *kit.Timestamp `json:"disabled_at"`
	FailingSince            *kit.Timestamp `json:"failing_since"`
	PreviousSecretExpiresAt *kit.Timestamp `json:"previous_secret_expires_at"`
	Created                 kit.Timestamp  `json:"created"`
	Secret                  string         `json:"secret,omitempty"`
}

func (s *Service) endpointView(e webhook.Endpoint, secret bool) EndpointJSON {
	v := EndpointJSON{ID: e.ID, Object: "webhook_endpoint", URL: e.URL, Description: e.Description,
		EnabledEvents: e.EventTypes, Environment: string(e.Environment), Status: "enabled", DisabledAt: kit.TimestampPtr(e.DisabledAt),
		FailingSince: kit.TimestampPtr(e.FailingSince), Created: kit.Timestamp(e.CreatedAt)}
	if e.DisabledAt != nil {
		v.Status, v.DisabledReason = "disabled", &e.DisabledReason
	}
	if e.OldSecret != "" && e.OldSecretExpires != nil && s.Clock.Now().Before(*e.OldSecretExpires) {
		v.PreviousSecretExpiresAt = kit.TimestampPtr(e.OldSecretExpires)
	}
	if secret {
		v.Secret = e.Secret
	}
	return v
}

// checkEndpoint validates the fields of req that are set into e; every
// problem is a 400 invalid_parameter naming the field.
func (s *Service) checkEndpoint(ctx context.Context, op string, e *webhook.Endpoint, req EndpointRequest) error {
	if req.URL != nil {
		p := webhook.PolicyFor(e.Environment, s.o.AllowPrivate)
		u, msg := p.CheckURL(*req.URL)
		if msg == "" {
			msg = s.sender.Resolve(ctx, u.Hostname(), p)
		}
		if msg != "" {
			return apperr.Param(op, "url", msg)
		}
		e.URL = u.String()
	}
	if req.EnabledEvents != nil {
		if msg := webhook.CheckTypes(*req.EnabledEvents); msg != "" {
			return apperr.Param(op, "enabled_events", msg)
		}
		e.EventTypes = *req.EnabledEvents
	}
	if req.Description != nil {
		if n := len([]rune(*req.Description)); n > webhook.MaxDescription || strings.ContainsRune(*req.Description, 0) {
			return apperr.Param(op, "description", fmt.Sprintf("description is longer than %d characters or holds a NUL", webhook.MaxDescription))
		}
		e.Description = *req.Description
	}
	return nil
}

// EventTypes are what an endpoint may subscribe to: "*" (every type, now
// and later) and the event catalogue in documentation order; the
// dashboard's form offers them.
func EventTypes() []string {
	out := []string{webhook.Wildcard}
	for _, t := range event.Types {
		out = append(out, string(t))
	}
	return out
}

// CreateEndpoint adds an endpoint to the caller's account and
// environment; the answer shows its signing secret, once.
func (s *Service) CreateEndpoint(ctx context.Context, claim idempotency.Claim, p account.Principal, req EndpointRequest) (EndpointJSON, error) {
	const op = "webhooks.CreateEndpoint"
	now := s.Clock.Now()
	e := webhook.Endpoint{ID: s.IDs.New("webhook"), AccountID: p.AccountID, Environment: p.Environment,
		Secret: webhook.NewSecret(), CreatedAt: now, UpdatedAt: now}
	if req.URL == nil {
		return EndpointJSON{}, apperr.Param(op, "url", "url is required")
	}
	if req.EnabledEvents == nil {
		return EndpointJSON{}, apperr.Param(op, "enabled_events", "enabled_events is required: event types, or [\"*\"] for all")
	}
	if err := s.checkEndpoint(ctx, op, &e, req); err != nil {
		return EndpointJSON{}, err
	}
	if req.Disabled != nil && *req.Disabled {
		e.DisabledAt, e.DisabledReason = &now, "disabled by the account"
	}
	err := s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		eps, err := q.Endpoints(ctx, p.AccountID, p.Environment, false)
		if err != nil {
			return err
		}
		if len(eps) >= webhook.MaxEndpoints {
			return apperr.E(op, apperr.Conflict, CodeTooManyWebhookEndpoints,
				fmt.Sprintf("an account has at most %d webhook endpoints per environment", webhook.MaxEndpoints))
		}
		return q.InsertEndpoint(ctx, e)
	})
	return s.endpointView(e, true), err
}

// EndpointListJSON lists an account's endpoints (all of them: at most
// webhook.MaxEndpoints).
type EndpointListJSON struct {
	Object  string         `json:"object"`
	Data    []EndpointJSON `json:"data"`
	HasMore bool           `json:"has_more"`
}

// Endpoints lists the caller's endpoints of its environment, oldest first.
func (s *Service) Endpoints(ctx context.Context, p account.Principal) (EndpointListJSON, error) {
	eps, err := s.DB.Read().Endpoints(ctx, p.AccountID, p.Environment, false)
	out := EndpointListJSON{Object: "list", Data: []EndpointJSON{}}
	for _, e := range eps {
		out.Data = append(out.Data, s.endpointView(e, false))
	}
	return out, err
}

// Endpoint returns one of the caller's endpoints.
func (s *Service) Endpoint(ctx context.Context, p account.Principal, id string) (EndpointJSON, error) {
	e, err := s.DB.Read().Endpoint(ctx, p.AccountID, p.Environment, id, false)
	return s.endpointView(e, false), err
}

// UpdateEndpoint changes an endpoint's url, event types, description or
// state: disabled true disables it ("disabled by the account"), false
// enables it again and forgets its failures.
func (s *Service) UpdateEndpoint(ctx context.Context, claim idempotency.Claim, p account.Principal, id string, req EndpointRequest) (EndpointJSON, error) {
	const op = "webhooks.UpdateEndpoint"
	var e webhook.Endpoint
	if _, err := s.DB.Read().Endpoint(ctx, p.AccountID, p.Environment, id, false); err != nil {
		return EndpointJSON{}, err
	}
	probe := webhook.Endpoint{Environment: p.Environment}
	if err := s.checkEndpoint(ctx, op, &probe, req); err != nil { // DNS outside the transaction
		return EndpointJSON{}, err
	}
	err := s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		var err error
		if e, err = q.Endpoint(ctx, p.AccountID, p.Environment, id, true); err != nil {
			return err
		}
		if req.URL != nil {
			e.URL = probe.URL
		}
		if req.EnabledEvents != nil {
			e.EventTypes = probe.EventTypes
		}
		if req.Description != nil {
			e.Description = probe.Description
		}
		now := s.Clock.Now()
		switch {
		case req.Disabled == nil:
		case *req.Disabled && e.DisabledAt == nil:
			e.DisabledAt, e.DisabledReason = &now, "disabled by the account"
		case !*req.Disabled:
			e.DisabledAt, e.DisabledReason, e.FailingSince = nil, "", nil
		}
		e.UpdatedAt = now
		return q.UpdateEndpoint(ctx, e)
	})
	return s.endpointView(e, false), err
}

// DeletedJSON answers a deletion.
type DeletedJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// DeleteEndpoint deletes an endpoint with its deliveries and log.
func (s *Service) DeleteEndpoint(ctx context.Context, claim idempotency.Claim, p account.Principal, id string) (DeletedJSON, error) {
	err := s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		if _, err := q.Endpoint(ctx, p.AccountID, p.Environment, id, true); err != nil {
			return err
		}
		return q.DeleteEndpoint(ctx, id)
	})
	return DeletedJSON{ID: id, Object: "webhook_endpoint", Deleted: err == nil}, err
}

// RotateSecret gives an endpoint a new secret; the old one goes on
// signing (a second v1 in the signature) for overlap seconds: nil takes
// webhook.DefaultOverlap, 0 ends it at once.
func (s *Service) RotateSecret(ctx context.Context, claim idempotency.Claim, p account.Principal, id string, overlap *int64) (EndpointJSON, error) {
	const op = "webhooks.RotateSecret"
	d := webhook.DefaultOverlap
	if overlap != nil {
		if *overlap < 0 || *overlap > int64(webhook.MaxOverlap/time.Second) {
			return EndpointJSON{}, apperr.Param(op, "overlap_seconds",
				fmt.Sprintf("overlap_seconds is from 0 to %d", int64(webhook.MaxOverlap/time.Second)))
		}
		d = time.Duration(*overlap) * time.Second
	}
	var e webhook.Endpoint
	err := s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		var err error
		if e, err = q.Endpoint(ctx, p.AccountID, p.Environment, id, true); err != nil {
			return err
		}
		now := s.Clock.Now()
		until := now.Add(d)
		e.OldSecret, e.OldSecretExpires, e.Secret, e.UpdatedAt = e.Secret, &until, webhook.NewSecret(), now
		return q.UpdateEndpoint(ctx, e)
	})
	return s.endpointView(e, true), err
}
