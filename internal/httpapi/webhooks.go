package httpapi

import (
	"net/http"

	"github.com/farebox/farebox/internal/app/webhooks"
)

// Webhook endpoints and their delivery log (docs/webhooks.md).

func (s *Server) createWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	var req webhooks.EndpointRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	out, err := s.Webhooks.CreateEndpoint(r.Context(), claimOf(r), principalOf(r), req)
	return writeResult(w, http.StatusCreated, out, err)
}

func (s *Server) getWebhookEndpoints(w http.ResponseWriter, r *http.Request) error {
	if _, _, err := listQuery("httpapi.getWebhookEndpoints", r); err != nil {
		return err
	}
	out, err := s.Webhooks.Endpoints(r.Context(), principalOf(r))
	return writeResult(w, http.StatusOK, out, err)
}

func (s *Server) getWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	out, err := s.Webhooks.Endpoint(r.Context(), principalOf(r), r.PathValue("endpoint_id"))
	return writeResult(w, http.StatusOK, out, err)
}

func (s *Server) updateWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	var req webhooks.EndpointRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	out, err := s.Webhooks.UpdateEndpoint(r.Context(), claimOf(r), principalOf(r), r.PathValue("endpoint_id"), req)
	return writeResult(w, http.StatusOK, out, err)
}

func (s *Server) deleteWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	out, err := s.Webhooks.DeleteEndpoint(r.Context(), claimOf(r), principalOf(r), r.PathValue("endpoint_id"))
	return writeResult(w, http.StatusOK, out, err)
}

// rotateRequest is the body of POST …/rotate_secret.json.
type rotateRequest struct {
	OverlapSeconds *int64 `json:"overlap_seconds"`
}

func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	var req rotateRequest
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	out, err := s.Webhooks.RotateSecret(r.Context(), claimOf(r), principalOf(r), r.PathValue("endpoint_id"), req.OverlapSeconds)
	return writeResult(w, http.StatusOK, out, err)
}

func (s *Server) getWebhookAttempts(w http.ResponseWriter, r *http.Request) error {
	_, lr, err := listQuery("httpapi.getWebhookAttempts", r)
	if err != nil {
		return err
	}
	out, err := s.Webhooks.Attempts(r.Context(), principalOf(r), r.PathValue("endpoint_id"), lr)
	return writeResult(w, http.StatusOK, out, err)
}

// redeliverRequest is the body of POST …/redeliver.json.
type redeliverRequest struct {
	EventID string `json:"event_id"`
}

func (s *Server) redeliverWebhook(w http.ResponseWriter, r *http.Request) error {
	var req redeliverRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	out, err := s.Webhooks.Redeliver(r.Context(), claimOf(r), principalOf(r), r.PathValue("endpoint_id"), req.EventID)
	return writeResult(w, http.StatusAccepted, out, err)
}
