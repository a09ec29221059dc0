package httpapi

import (
	"net/http"
	"strconv"

	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/apperr"
)

func (s *Server) searchByCityName(w http.ResponseWriter, r *http.Request) error {
	ps, err := s.Products.SearchByCityName(r.Context(), principalOf(r), r.URL.Query().Get("city_name"))
	return writeView(w, http.StatusOK, ps, err, products.ProductsView)
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
	ps, err := s.Products.SearchByCoordinates(r.Context(), principalOf(r), lat, lon)
	return writeView(w, http.StatusOK, ps, err, products.ProductsView)
}

func (s *Server) searchByBoundingBox(w http.ResponseWriter, r *http.Request) error {
	var box products.Rect
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
	ps, err := s.Products.SearchByBoundingBox(r.Context(), principalOf(r), box)
	return writeView(w, http.StatusOK, ps, err, products.ProductsView)
}

func (s *Server) getProduct(w http.ResponseWriter, r *http.Request) error {
	p, err := s.Products.Product(r.PathValue("product_id"))
	return writeView(w, http.StatusOK, p, err, products.ProductView)
}

func (s *Server) getArea(w http.ResponseWriter, r *http.Request) error {
	a, err := s.Products.Area(r.PathValue("area_id"))
	return writeView(w, http.StatusOK, a, err, products.AreaResponse)
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
