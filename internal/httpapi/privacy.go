package httpapi

import (
	"net/http"
)

// Export and erasure of personal data (docs/privacy.md): a partner's
// coupon, subscription or customer.

// exportPersonalData answers GET /v1/privacy/<kind>s/{<param>}.json.
func (s *Server) exportPersonalData(kind, param string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		out, err := s.Privacy.Export(r.Context(), principalOf(r), kind, r.PathValue(param))
		return writeResult(w, http.StatusOK, out, err)
	}
}

// erasureRequest is the optional body of an erasure: no fields (an
// unknown one is a 400 naming it).
type erasureRequest struct{}

// erasePersonalData answers POST /v1/privacy/<kind>s/{<param>}/erasure.json.
func (s *Server) erasePersonalData(kind, param string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := decodeOptional(r, &erasureRequest{}); err != nil {
			return err
		}
		out, err := s.Privacy.Erase(r.Context(), claimOf(r), principalOf(r), kind, r.PathValue(param))
		return writeResult(w, http.StatusOK, out, err)
	}
}
