package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
)

// orderRequest is the body of POST …/ticketing/orders.json.
type orderRequest struct {
	ProductIDs             []string `json:"product_ids"`
	OptionalOrderReference *string  `json:"optional_order_reference"`
	TestClock              *string  `json:"test_clock"`
}

func (s *Server) placeOrder(version int) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req orderRequest
		if err := decode(r, &req); err != nil {
			return err
		}
		if req.ProductIDs == nil {
			return apperr.Validation("orders", CodeInvalidProductIDs, "/product_ids", "product_ids is required: an array of product ids")
		}
		out, err := s.app.PlaceOrderResponse(r.Context(), claimOf(r), principalOf(r), app.OrderRequest{ProductIDs: req.ProductIDs,
			OptionalOrderReference: req.OptionalOrderReference, TestClock: req.TestClock}, version)
		if err != nil {
			return err
		}
		s.Metrics.Event("order_placed", out.Environment, 1)
		s.Metrics.Event("coupon_ordered", out.Environment, len(out.Coupons))
		return writeResult(w, http.StatusCreated, out, nil)
	}
}

func (s *Server) getOrder(version int) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		o, err := s.app.Order(r.Context(), principalOf(r), r.PathValue("order_id"))
		if err != nil {
			return err
		}
		out, err := s.app.OrderResponse(r.Context(), o, version, true)
		return writeResult(w, http.StatusOK, out, err)
	}
}

// writeResult writes v with status, or returns err for the pipeline to
// write instead.
func writeResult(w http.ResponseWriter, status int, v any, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, status, v)
	return nil
}

// writeView answers view(v) with status, or returns err when the call
// that made v failed.
func writeView[T, V any](w http.ResponseWriter, status int, v T, err error, view func(T) V) error {
	if err != nil {
		return err
	}
	writeJSON(w, status, view(v))
	return nil
}

type restoreRequest struct {
	RestoreSecret string   `json:"restore_secret"`
	CouponIDs     []string `json:"coupon_ids"`
}

func (s *Server) restoreOrder(version int) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req restoreRequest
		if err := decode(r, &req); err != nil {
			return err
		}
		if req.RestoreSecret == "" {
			return apperr.Validation("restore", CodeRestoreSecretRequired, "/restore_secret", "restore_secret is required")
		}
		o, coupons, err := s.app.Restore(r.Context(), claimOf(r), principalOf(r), r.PathValue("order_id"), app.RestoreRequest{RestoreSecret: req.RestoreSecret, CouponIDs: req.CouponIDs})
		if err != nil {
			return err
		}
		out, err := s.app.RestoreResponse(r.Context(), o, coupons, version)
		if err != nil {
			return err
		}
		s.Metrics.Event("coupon_restored", out.Environment, len(coupons))
		writeJSON(w, http.StatusCreated, out)
		return nil
	}
}

// readerOf is the principal of the API key a request to a capability route
// carries as "Authorization: Bearer <key>" (a partner backend's read); nil
// without one, or when it does not resolve: the request then reads as
// keyless, as the SDKs' do (it is never refused for it).
func (s *Server) readerOf(r *http.Request) *app.Principal {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return nil
	}
	p, err := s.Accounts.Authenticate(r.Context(), strings.TrimSpace(tok))
	if err != nil {
		return nil
	}
	return &p
}

func (s *Server) getCoupon(version int) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		d, err := s.app.Coupon(r.Context(), r.PathValue("coupon_id"))
		if err != nil {
			return err
		}
		// The answer depends on the key (restored_coupon_id for the owner).
		w.Header().Add("Vary", "Authorization")
		writeJSON(w, http.StatusOK, app.CouponResponse(d, version, s.readerOf(r)))
		return nil
	}
}

// activateRequest accepts every body shape of client-contract.md 2.2.
// Unknown top-level keys are ignored (Android may forward the web view's
// string verbatim).
type activateRequest struct {
	IdentificationMedium    json.RawMessage `json:"identification_medium"`
	ActivationStartDatetime *string         `json:"activation_start_datetime"`
	TariffSettings          json.RawMessage `json:"tariff_settings"`
	ReactivationKey         *string         `json:"reactivation_key"`
}

func (s *Server) activateCoupon(version int) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req activateRequest
		if err := decodeOptional(r, &req); err != nil {
			return err
		}
		in := app.ActivationRequest{IdentificationMedium: req.IdentificationMedium, TariffSettings: req.TariffSettings, Version: version}
		if req.ActivationStartDatetime != nil {
			in.ActivationStart = *req.ActivationStartDatetime
		}
		if req.ReactivationKey != nil {
			in.ReactivationKey = *req.ReactivationKey
			if in.ReactivationKey == "" {
				return apperr.Validation("activate", CodeInvalidReactivationKey, "/reactivation_key", "reactivation_key: must not be empty")
			}
		}
		res, err := s.app.ActivateCoupon(r.Context(), claimOf(r), r.PathValue("coupon_id"), in)
		if err != nil {
			return err
		}
		event := "coupon_activated"
		if in.ReactivationKey != "" {
			event = "subscription_reactivated"
		}
		s.Metrics.Event(event, res.Environment(), 1)
		writeJSON(w, http.StatusCreated, map[string]string{"ticket_id": res.TicketID})
		return nil
	}
}

func (s *Server) setTariffSettings(version int) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := readBody(r)
		if err != nil {
			return err
		}
		if err := checkJSONType(r); err != nil {
			return err
		}
		// Accept {"tariff_settings": {...}} and the bare object (client-contract.md T13).
		var wrapped struct {
			TariffSettings json.RawMessage `json:"tariff_settings"`
		}
		var probe map[string]json.RawMessage
		if err := decodeJSON(body, &probe, false); err != nil {
			return err
		}
		ts := json.RawMessage(body)
		if _, ok := probe["tariff_settings"]; ok {
			// The wrapped form holds nothing else (client-contract.md T13:
			// extra keys are not allowed; no SDK sends this body).
			for k := range probe {
				if k != "tariff_settings" {
					msg := fmt.Sprintf("unknown field %q beside tariff_settings", k)
					return apperr.E("tariff_settings", apperr.Invalid, CodeUnknownField, msg).
						WithDetails(apperr.FieldError{Field: "/" + apperr.EscapeToken(k), Message: msg})
				}
			}
			if err := decodeJSON(body, &wrapped, false); err != nil {
				return err
			}
			ts = wrapped.TariffSettings
		}
		d, err := s.app.SetTariffSettings(r.Context(), claimOf(r), r.PathValue("coupon_id"), ts)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, app.CouponResponse(d, version, s.readerOf(r)))
		return nil
	}
}

// getTicket answers PATCH …/tickets/{id}.json with the ticket (200). Tickets
// are complete when activation returns, so 202 ("still being prepared") is
// never needed; the SDKs' polling simply gets 200 at once.
func (s *Server) getTicket(version int) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		d, err := s.app.Ticket(r.Context(), r.PathValue("ticket_id"))
		if err != nil {
			return err
		}
		t, err := app.TicketResponse(d, s.Wallets.Offer)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, t)
		return nil
	}
}

func (s *Server) renderingOptionsHandler(w http.ResponseWriter, r *http.Request) error {
	d, err := s.app.Ticket(r.Context(), r.PathValue("ticket_id"))
	if err != nil {
		return err
	}
	o, err := s.Wallets.Offer(d)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o.Options)
	return nil
}

type reorderRequest struct {
	SubscriptionCycleID *string `json:"subscription_cycle_id"`
}

func (s *Server) reorderSubscription(w http.ResponseWriter, r *http.Request) error {
	var req reorderRequest
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	cycle := ""
	if req.SubscriptionCycleID != nil {
		cycle = *req.SubscriptionCycleID
	}
	if err := s.app.Reorder(r.Context(), claimOf(r), principalOf(r), r.PathValue("subscription_id"), cycle); err != nil {
		return err
	}
	s.Metrics.Event("subscription_reordered", string(principalOf(r).Environment), 1)
	return s.writeSubscription(w, r, http.StatusCreated)
}

func (s *Server) cancelSubscription(w http.ResponseWriter, r *http.Request) error {
	cancelled, err := s.app.CancelSubscription(r.Context(), claimOf(r), principalOf(r), r.PathValue("subscription_id"))
	if err != nil {
		return err
	}
	if cancelled { // a repeated DELETE changes nothing and counts nothing
		s.Metrics.Event("subscription_cancelled", string(principalOf(r).Environment), 1)
	}
	// The Subscription plus its cancellation receipt (docs/books.md); a
	// repeated DELETE answers the same receipt.
	out, err := s.app.CancelledSubscription(r.Context(), principalOf(r), r.PathValue("subscription_id"))
	return writeResult(w, http.StatusOK, out, err)
}

func (s *Server) getSubscription(w http.ResponseWriter, r *http.Request) error {
	return s.writeSubscription(w, r, http.StatusOK)
}

func (s *Server) writeSubscription(w http.ResponseWriter, r *http.Request, status int) error {
	d, err := s.app.SubscriptionDetails(r.Context(), principalOf(r), r.PathValue("subscription_id"))
	if err != nil {
		return err
	}
	writeJSON(w, status, app.SubscriptionResponse(d))
	return nil
}
