package httpapi

import (
	"net/http"
	"strconv"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
)

func (s *Server) searchByCityName(w http.ResponseWriter, r *http.Request) error {
	ps, err := s.app.SearchByCityName(r.Context(), principalOf(r), r.URL.Query().Get("city_name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, app.ProductsResponse(ps))
	return nil
}

func (s *Server) searchByCoordinates(w http.ResponseWriter, r *http.Request) error {
	lat, err := queryFloat(r, "latitude", -90, 90)
	if err != nil {
		return err
	}
	lon, err := queryFloat(r, "longitude", -180, 180)
	if err != nil {
		return err
	}
	ps, err := s.app.SearchByCoordinates(r.Context(), principalOf(r), lat, lon)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, app.ProductsResponse(ps))
	return nil
}

func (s *Server) searchByBoundingBox(w http.ResponseWriter, r *http.Request) error {
	var box app.Rect
	var err error
	for _, f := range []struct {
		name   string
		dst    *float64
		lo, hi float64
	}{
		{"min_latitude", &box.MinLat, -90, 90}, {"min_longitude", &box.MinLon, -180, 180},
		{"max_latitude", &box.MaxLat, -90, 90}, {"max_longitude", &box.MaxLon, -180, 180},
	} {
		if *f.dst, err = queryFloat(r, f.name, f.lo, f.hi); err != nil {
			return err
		}
	}
	ps, err := s.app.SearchByBoundingBox(r.Context(), principalOf(r), box)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, app.ProductsResponse(ps))
	return nil
}

func (s *Server) getProduct(w http.ResponseWriter, r *http.Request) error {
	p, err := s.app.Product(r.PathValue("product_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, app.ProductResponse(p))
	return nil
}

func (s *Server) getArea(w http.ResponseWriter, r *http.Request) error {
	a, err := s.app.Area(r.PathValue("area_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, app.AreaResponse(a))
	return nil
}

// queryFloat parses a required number parameter within [lo, hi].
func queryFloat(r *http.Request, name string, lo, hi float64) (float64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, apperr.Param("query", name, name+" is required")
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f != f || f < lo || f > hi {
		return 0, apperr.Param("query", name, name+" must be a number from "+strconv.FormatFloat(lo, 'f', -1, 64)+" to "+strconv.FormatFloat(hi, 'f', -1, 64))
	}
	return f, nil
}
