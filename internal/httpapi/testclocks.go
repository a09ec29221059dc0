package httpapi

import (
	"net/http"

	"github.com/farebox/farebox/internal/app"
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
	c, err := s.app.CreateTestClock(r.Context(), principalOf(r), app.TestClockRequest{FrozenTime: req.FrozenTime, Name: req.Name})
	return writeResult(w, http.StatusCreated, app.TestClockResponse(c), err)
}

func (s *Server) getTestClock(w http.ResponseWriter, r *http.Request) error {
	c, err := s.app.TestClock(r.Context(), principalOf(r), r.PathValue("test_clock_id"))
	return writeResult(w, http.StatusOK, app.TestClockResponse(c), err)
}

func (s *Server) getTestClocks(w http.ResponseWriter, r *http.Request) error {
	_, lr, err := listQuery("httpapi.getTestClocks", r)
	if err != nil {
		return err
	}
	out, err := s.app.TestClocks(r.Context(), principalOf(r), lr)
	return writeResult(w, http.StatusOK, out, err)
}

type advanceRequest struct {
	FrozenTime string `json:"frozen_time"`
}

func (s *Server) advanceTestClock(w http.ResponseWriter, r *http.Request) error {
	var req advanceRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	c, err := s.app.AdvanceTestClock(r.Context(), principalOf(r), r.PathValue("test_clock_id"), req.FrozenTime)
	return writeResult(w, http.StatusOK, app.TestClockResponse(c), err)
}

func (s *Server) deleteTestClock(w http.ResponseWriter, r *http.Request) error {
	c, err := s.app.DeleteTestClock(r.Context(), principalOf(r), r.PathValue("test_clock_id"))
	return writeResult(w, http.StatusOK, app.DeletedTestClockResponse(c), err)
}
