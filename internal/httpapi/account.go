package httpapi

import (
	"net/http"
	"time"
)

// accountJSON answers "who am I" for a key.
type accountJSON struct {
	AccountID   string `json:"account_id"`
	Name        string `json:"name"`
	Environment string `json:"environment"`
	KeyID       string `json:"key_id"`
}

func (s *Server) getAccount(w http.ResponseWriter, r *http.Request) error {
	p := principalOf(r)
	writeJSON(w, http.StatusOK, accountJSON{AccountID: p.AccountID, Name: p.AccountName, Environment: string(p.Environment), KeyID: p.KeyID})
	return nil
}

type usageJSON struct {
	AccountID string     `json:"account_id"`
	From      string     `json:"from"`
	To        string     `json:"to"`
	Days      []usageDay `json:"days"`
}

type usageDay struct {
	Date      string `json:"date"`
	Endpoint  string `json:"endpoint"`
	Counted   int64  `json:"counted"`
	Uncounted int64  `json:"uncounted"`
	Refused   int64  `json:"refused"`
}

// getUsage reports the caller's ledger by day and endpoint. from and to
// default to the current UTC month so far.
func (s *Server) getUsage(w http.ResponseWriter, r *http.Request) error {
	p := principalOf(r)
	now := s.app.Now().UTC()
	from := r.URL.Query().Get("from")
	to := r.URL.Query().Get("to")
	if from == "" {
		from = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	}
	if to == "" {
		to = now.Format(time.DateOnly)
	}
	rows, err := s.Billing.Usage(r.Context(), p.AccountID, from, to)
	if err != nil {
		return err
	}
	out := usageJSON{AccountID: p.AccountID, From: from, To: to, Days: []usageDay{}}
	for _, row := range rows {
		out.Days = append(out.Days, usageDay{Date: row.Day, Endpoint: row.Endpoint, Counted: row.Counted, Uncounted: row.Uncounted, Refused: row.Refused})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
