package httpapi

import (
	"bufio"
	"net/http"

	"github.com/farebox/farebox/internal/web"
)

// adminClearing is the console's clearing page: the month's map of
// revenue per federal state and its totals (docs/clearing.md).
func (s *Server) adminClearing(w http.ResponseWriter, r *http.Request) error {
	v, err := s.Clearing.Page(r.Context(), r.URL.Query().Get("month"))
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "admin_clearing", "admin.clearing", web.Page{Nav: "clearing", Data: v})
}

// clearingReport streams a month's report in format; a month that has
// ended is reported (frozen) by its first export.
func (s *Server) clearingReport(format string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		m, err := s.Clearing.ParseMonth("month", r.PathValue("month"))
		if err != nil {
			return err
		}
		if _, err := s.Clearing.Report(r.Context(), m); err != nil {
			return err
		}
		ct := "application/json"
		if format == "csv" {
			ct = "text/csv; charset=utf-8"
			w.Header().Set("Content-Disposition", `attachment; filename="clearing-`+m.String()+`.csv"`)
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "no-store")
		bw := bufio.NewWriterSize(w, 64<<10)
		if _, err := s.Clearing.Export(r.Context(), m, format, bw); err != nil {
			return err
		}
		return bw.Flush()
	}
}

// clearingVerify is a month's reconciliation with its billable items.
func (s *Server) clearingVerify(w http.ResponseWriter, r *http.Request) error {
	m, err := s.Clearing.ParseMonth("month", r.PathValue("month"))
	if err != nil {
		return err
	}
	v, err := s.Clearing.Verify(r.Context(), m)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}
