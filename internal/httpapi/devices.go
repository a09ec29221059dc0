package httpapi

import (
	"net/http"

	"github.com/farebox/farebox/internal/app/devices"
	"github.com/farebox/farebox/internal/apperr"
)

// Device binding of dynamic tickets (docs/barcodes.md, "Dynamic barcodes").

func (s *Server) devices() (*devices.Service, error) {
	if s.Devices == nil {
		return nil, apperr.E("httpapi.devices", apperr.Unavailable, devices.CodeDeviceNotBound, "device binding is not configured")
	}
	return s.Devices, nil
}

// bindDevice is the rendering engine's call. The engine runs in a web view
// whose page has no origin of its own (about:blank), so the answer allows
// any origin; the engine sends its body without a content type, which
// needs no CORS preflight.
func (s *Server) bindDevice(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	d, err := s.devices()
	if err != nil {
		return err
	}
	var req devices.BindRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	out, err := d.Bind(r.Context(), claimOf(r), r.PathValue("ticket_id"), req)
	status := http.StatusOK
	if out.Outcome != "" && out.Outcome != "unchanged" {
		status = http.StatusCreated
	}
	return writeResult(w, status, out, err)
}

func (s *Server) getDeviceBinding(w http.ResponseWriter, r *http.Request) error {
	d, err := s.devices()
	if err != nil {
		return err
	}
	out, err := d.Binding(r.Context(), principalOf(r), r.PathValue("ticket_id"))
	return writeResult(w, http.StatusOK, out, err)
}

func (s *Server) allowDeviceMove(w http.ResponseWriter, r *http.Request) error {
	d, err := s.devices()
	if err != nil {
		return err
	}
	if err := decodeOptional(r, &struct{}{}); err != nil {
		return err
	}
	out, err := d.AllowMove(r.Context(), claimOf(r), principalOf(r), r.PathValue("ticket_id"))
	return writeResult(w, http.StatusOK, out, err)
}
