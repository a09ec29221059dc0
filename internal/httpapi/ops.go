package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/farebox/farebox/api"
	"github.com/farebox/farebox/internal/apperr"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz checks the database (and whatever Deps.Ready adds).
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.app.Ping(ctx); err != nil {
		return apperr.E("readyz", apperr.Unavailable, CodeDatabaseUnavailable, "not ready: database unavailable").WithCause(err)
	}
	if s.Ready != nil {
		if err := s.Ready(ctx); err != nil {
			return apperr.E("readyz", apperr.Unavailable, CodeNotReady, "not ready: "+err.Error()).WithCause(err)
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready", "database": s.app.Database()})
	return nil
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) error {
	if s.MetricsElsewhere {
		return apperr.E("route", apperr.NotFound, CodeNotFound, "no such resource: "+r.URL.Path)
	}
	s.Metrics.Handler().ServeHTTP(w, r)
	return nil
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	b, err := api.JSON()
	if err != nil {
		return apperr.Wrap("openapi", err)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(b)
	return nil
}
