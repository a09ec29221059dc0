package httpapi

import (
	"net/http"

	"github.com/farebox/farebox/internal/app/testclock"
)

// Test clocks (docs/test-clocks.md): test keys only.

type testClockRequest struct {
	FrozenTime string  `json:"frozen_time"`
	Name       *string `json:"name"`
}

func (s *Server) createTestClock(w http.ResponseWriter, r *http.Request) error {
	var req testClockRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	c, err := s.TestClocks.Create(r.Context(), claimOf(r), principalOf(r), testclock.Request{FrozenTime: req.FrozenTime, Name: req.Name})
	return writeResult(w, http.StatusCreated, testclock.Response(c), err)
}

func (s *Server) getTestClock(w http.ResponseWriter, r *http.Request) error {
	c, err := s.TestClocks.Get(r.Context(), principalOf(r), r.PathValue("test_clock_id"))
	return writeResult(w, http.StatusOK, testclock.Response(c), err)
}

func (s *Server) getTestClocks(w http.ResponseWriter, r *http.Request) error {
	return writeList(w, r, "httpapi.getTestClocks", s.TestClocks.List)
}

type advanceRequest struct {
	FrozenTime string `json:"frozen_time"`
}

func (s *Server) advanceTestClock(w http.ResponseWriter, r *http.Request) error {
	var req advanceRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	c, err := s.TestClocks.Advance(r.Context(), claimOf(r), principalOf(r), r.PathValue("test_clock_id"), req.FrozenTime)
	return writeResult(w, http.StatusOK, testclock.Response(c), err)
}

func (s *Server) deleteTestClock(w http.ResponseWriter, r *http.Request) error {
	c, err := s.TestClocks.Delete(r.Context(), claimOf(r), principalOf(r), r.PathValue("test_clock_id"))
	return writeResult(w, http.StatusOK, testclock.DeletedResponse(c), err)
}
