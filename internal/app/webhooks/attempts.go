package webhooks

import (
	"context"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/webhook"
)

// AttemptJSON is one row of an endpoint's delivery log.
type AttemptJSON struct {
	ID              string         `json:"id"`
	Object          string         `json:"object"`
	DeliveryID      string         `json:"delivery_id"`
	EventID         string         `json:"event_id"`
	EventType       string         `json:"event_type"`
	Attempt         int            `json:"attempt"`
	Created         kit.Timestamp  `json:"created"`
	StatusCode      *int           `json:"status_code"`
	LatencyMS       int64          `json:"latency_ms"`
	ResponseExcerpt string         `json:"response_excerpt"`
	Error           *string        `json:"error"`
	Succeeded       bool           `json:"succeeded"`
	Redelivery      bool           `json:"redelivery"`
	NextAttemptAt   *kit.Timestamp `json:"next_attempt_at"`
}

// AttemptListJSON is a page of the delivery log.
type AttemptListJSON struct {
	Object  string        `json:"object"`
	Data    []AttemptJSON `json:"data"`
	HasMore bool          `json:"has_more"`
}

// Attempts is a page of an endpoint's delivery log, newest first (limit
// and starting_after as every list).
func (s *Service) Attempts(ctx context.Context, p account.Principal, id string, req kit.ListRequest) (AttemptListJSON, error) {
	const op = "webhooks.Attempts"
	r := s.DB.Read()
	if _, err := r.Endpoint(ctx, p.AccountID, p.Environment, id, false); err != nil {
		return AttemptListJSON{}, err
	}
	var l kit.ListParams
	limit := l.Limit(req.Limit)
	var before int64
	if req.EndingBefore != "" {
		l.Bad("ending_before", "the delivery log pages with starting_after only")
	}
	err := l.Cursors(kit.ListRequest{StartingAfter: req.StartingAfter}, "attempt of this endpoint", "", func(_, aid string) (bool, error) {
		n, ok, err := r.AttemptPosition(ctx, id, aid)
		before = n
		return ok, err
	})
	if err != nil {
		return AttemptListJSON{}, err
	}
	if err := l.Err(op); err != nil {
		return AttemptListJSON{}, err
	}
	atts, err := r.Attempts(ctx, id, before, limit)
	if err != nil {
		return AttemptListJSON{}, err
	}
	out := AttemptListJSON{Object: "list", Data: []AttemptJSON{}, HasMore: len(atts) > limit}
	for i, at := range atts {
		if i == limit {
			break
		}
		out.Data = append(out.Data, attemptView(at))
	}
	return out, nil
}

func attemptView(at webhook.Attempt) AttemptJSON {
	v := AttemptJSON{ID: at.ID, Object: "webhook_attempt", DeliveryID: at.DeliveryID, EventID: at.EventID,
		EventType: at.EventType, Attempt: at.Attempt, Created: kit.Timestamp(at.At), LatencyMS: at.Latency.Milliseconds(),
		ResponseExcerpt: at.Excerpt, Succeeded: at.Succeeded, Redelivery: at.Manual, NextAttemptAt: kit.TimestampPtr(at.NextAttemptAt)}
	if at.StatusCode != 0 {
		v.StatusCode = &at.StatusCode
	}
	if at.Error != "" {
		v.Error = &at.Error
	}
	return v
}

// DeliveryJSON answers a redelivery.
type DeliveryJSON struct {
	ID         string `json:"id"`
	Object     string `json:"object"`
	EndpointID string `json:"endpoint_id"`
	EventID    string `json:"event_id"`
	State      string `json:"state"`
}

// Redeliver sends an event of the caller's account and environment to
// one of its endpoints again, once (a manual delivery is not retried and
// not ordered behind the object's other events), whatever types the
// endpoint subscribes to. A disabled endpoint gets nothing.
func (s *Service) Redeliver(ctx context.Context, claim idempotency.Claim, p account.Principal, id, eventID string) (DeliveryJSON, error) {
	const op = "webhooks.Redeliver"
	if eventID == "" {
		return DeliveryJSON{}, apperr.Param(op, "event_id", "event_id is required")
	}
	var d DeliveryJSON
	err := s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		ep, err := q.Endpoint(ctx, p.AccountID, p.Environment, id, false)
		if err != nil {
			return err
		}
		if ep.DisabledAt != nil {
			return apperr.E(op, apperr.Conflict, CodeWebhookEndpointDisabled, "the endpoint is disabled: enable it first")
		}
		ev, ok, err := q.Event(ctx, p.AccountID, p.Environment, eventID)
		if err != nil {
			return err
		}
		if !ok {
			return apperr.NotFoundf(op, CodeEventNotFound)
		}
		now := s.Clock.Now()
		nd := webhook.Delivery{ID: s.IDs.New("delivery"), EndpointID: ep.ID, AccountID: ep.AccountID, Environment: ep.Environment,
			EventID: ev.ID, ObjectID: ev.ObjectID, Manual: true, CreatedAt: now}
		d = DeliveryJSON{ID: nd.ID, Object: "webhook_delivery", EndpointID: ep.ID, EventID: ev.ID, State: webhook.StatePending}
		return s.deliveries.Add(ctx, q, []webhook.Delivery{nd}, now)
	})
	return d, err
}
