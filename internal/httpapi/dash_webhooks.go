package httpapi

import (
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/app/webhooks"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/web"
)

// The dashboard's webhooks (docs/web.md "Partner dashboard", issue 18
// item 3): the environment's endpoints with create, enable/disable,
// rotate and delete, and per endpoint its delivery log with a redelivery
// per event. Every handler calls the webhooks methods the API's
// /v1/webhook_endpoints routes call, with the session's account and the
// page's environment (dashPrincipal), so the API's rules hold here too:
// foreign ids are 404, a live endpoint must be https to a public address.

// hookRow is one endpoint as the list shows it.
type hookRow struct {
	ID, URL, Description, Status, DisabledReason string
	FailingSince                                 template.HTML // relative to now (ago), or —
	Events                                       []string
	Enabled                                      bool
}

func (s *Server) hookRowOf(l string, e webhooks.EndpointJSON) hookRow {
	h := hookRow{ID: e.ID, URL: e.URL, Description: e.Description, Events: e.EnabledEvents, Enabled: e.Status == "enabled",
		Status: web.T(l, "dash.hook.status."+e.Status), DisabledReason: orDash(e.DisabledReason), FailingSince: "—"}
	if e.FailingSince != nil {
		h.FailingSince = s.ago(l, time.Time(*e.FailingSince))
	}
	return h
}

// hookForm is the create form's values and its field errors (by field:
// "url", "enabled_events"), shown again after a refusal.
type hookForm struct {
	URL, Description string
	Events           map[string]bool
	Errors           map[string]string
}

type hooksView struct {
	Endpoints []hookRow
	Types     []string // the form's choices: "*" and the catalogue
	Form      hookForm
}

// hooksPage shows the environment's endpoints and the create form.
func (s *Server) hooksPage(w http.ResponseWriter, r *http.Request, status int, f hookForm, p web.Page) error {
	l := lang(r)
	list, err := s.Webhooks.Endpoints(r.Context(), dashPrincipal(r))
	if err != nil {
		return err
	}
	v := hooksView{Types: webhooks.EventTypes(), Form: f}
	for _, e := range list.Data {
		v.Endpoints = append(v.Endpoints, s.hookRowOf(l, e))
	}
	p.Data = v
	return s.dashRender(w, r, status, "dash_webhooks", "webhooks", p)
}

func (s *Server) dashWebhooks(w http.ResponseWriter, r *http.Request) error {
	return s.hooksPage(w, r, http.StatusOK, hookForm{}, web.Page{})
}

// fieldError is a refusal to show on the form: its status, the field the
// error names (without a JSON pointer's slash) and its message; ok false
// for an error that is not about the input.
func fieldError(err error) (status int, field, msg string, ok bool) {
	k := apperr.KindOf(err)
	if k != apperr.Invalid && k != apperr.Unprocessable && k != apperr.Conflict {
		return 0, "", "", false
	}
	e := apperr.As(err)
	if len(e.Details) > 0 {
		field = strings.TrimPrefix(e.Details[0].Field, "/")
	}
	return statusOf(k), field, e.Msg, true
}

// actionOutcome shows page after a form's action: with the refusal's
// status and message when the input was refused (fieldError), else with
// notice; any other error is returned.
func actionOutcome(w http.ResponseWriter, r *http.Request, err error, page func(http.ResponseWriter, *http.Request, int, web.Page) error, notice string) error {
	if status, _, msg, ok := fieldError(err); ok {
		return page(w, r, status, web.Page{Error: msg})
	}
	if err != nil {
		return err
	}
	return page(w, r, http.StatusOK, web.Page{Notice: notice})
}

// dashCreateWebhook makes an endpoint of the page's environment from the
// form (url, description, one "event" per checked type) and shows its
// signing secret once (on the list after the redirect); a refused input shows the form again with the
// field's message.
func (s *Server) dashCreateWebhook(w http.ResponseWriter, r *http.Request) error {
	u, desc := strings.TrimSpace(r.PostForm.Get("url")), r.PostForm.Get("description")
	types := r.PostForm["event"]
	req := webhooks.EndpointRequest{URL: &u, Description: &desc, EnabledEvents: &types}
	f := hookForm{URL: u, Description: desc, Events: map[string]bool{}}
	for _, t := range types {
		f.Events[t] = true
	}
	out, err := s.Webhooks.CreateEndpoint(r.Context(), claimOf(r), dashPrincipal(r), req)
	if status, field, msg, ok := fieldError(err); ok {
		f.Errors = map[string]string{field: msg}
		return s.hooksPage(w, r, status, f, web.Page{Error: msg})
	}
	if err != nil {
		return err
	}
	return s.showOnce(w, r, web.T(lang(r), "dash.hook.created", out.URL, out.Secret), "/dashboard/"+r.PathValue("env")+"/webhooks")
}

func (s *Server) dashEnableWebhook(w http.ResponseWriter, r *http.Request) error {
	return s.setWebhookDisabled(w, r, false)
}

func (s *Server) dashDisableWebhook(w http.ResponseWriter, r *http.Request) error {
	return s.setWebhookDisabled(w, r, true)
}

// setWebhookDisabled enables or disables an endpoint (enabling forgets its
// failures, as PATCH disabled=false does).
func (s *Server) setWebhookDisabled(w http.ResponseWriter, r *http.Request, disabled bool) error {
	out, err := s.Webhooks.UpdateEndpoint(r.Context(), claimOf(r), dashPrincipal(r), r.PathValue("endpoint_id"), webhooks.EndpointRequest{Disabled: &disabled})
	if err != nil {
		return err
	}
	key := "dash.hook.enabled"
	if disabled {
		key = "dash.hook.disabled"
	}
	return s.hooksPage(w, r, http.StatusOK, hookForm{}, web.Page{Notice: web.T(lang(r), key, out.URL)})
}

// dashRotateWebhook gives an endpoint a new secret, shown once; the old
// one goes on signing for webhook.DefaultOverlap, as the API's default.
func (s *Server) dashRotateWebhook(w http.ResponseWriter, r *http.Request) error {
	out, err := s.Webhooks.RotateSecret(r.Context(), claimOf(r), dashPrincipal(r), r.PathValue("endpoint_id"), nil)
	if err != nil {
		return err
	}
	until := "—"
	if out.PreviousSecretExpiresAt != nil {
		until = s.ts(lang(r), time.Time(*out.PreviousSecretExpiresAt))
	}
	return s.showOnce(w, r, web.T(lang(r), "dash.hook.rotated", out.URL, out.Secret, until), "/dashboard/"+r.PathValue("env")+"/webhooks")
}

func (s *Server) dashDeleteWebhook(w http.ResponseWriter, r *http.Request) error {
	pr := dashPrincipal(r)
	id := r.PathValue("endpoint_id")
	e, err := s.Webhooks.Endpoint(r.Context(), pr, id)
	if err != nil {
		return err
	}
	if _, err := s.Webhooks.DeleteEndpoint(r.Context(), claimOf(r), pr, id); err != nil {
		return err
	}
	return s.hooksPage(w, r, http.StatusOK, hookForm{}, web.Page{Notice: web.T(lang(r), "dash.hook.deleted", e.URL)})
}

// attemptRow is one delivery attempt as the endpoint's page shows it;
// Redeliver is set on the newest row of each event on the page.
type attemptRow struct {
	When                                                               template.HTML // relative to now (ago)
	EventID, EventType, Attempt, Status, Latency, Excerpt, Error, Next string
	Succeeded, Redeliver                                               bool
}

type hookView struct {
	hookRow
	Attempts []attemptRow
	Next     string
}

// hookPage shows one endpoint and a page of its delivery log.
func (s *Server) hookPage(w http.ResponseWriter, r *http.Request, status int, p web.Page) error {
	l, pr, id := lang(r), dashPrincipal(r), r.PathValue("endpoint_id")
	e, err := s.Webhooks.Endpoint(r.Context(), pr, id)
	if err != nil {
		return err
	}
	lr := listRequest(r)
	if r.Method == http.MethodPost { // after a redelivery: the newest attempts
		lr.StartingAfter = ""
	}
	log, err := s.Webhooks.Attempts(r.Context(), pr, id, lr)
	if apperr.KindOf(err) == apperr.Invalid {
		p.Error = apperr.As(err).Msg
		status = http.StatusBadRequest
	} else if err != nil {
		return err
	}
	v := hookView{hookRow: s.hookRowOf(l, e)}
	var seen []string
	last := ""
	for _, a := range log.Data {
		row := attemptRow{When: s.ago(l, time.Time(a.Created)), EventID: a.EventID, EventType: a.EventType, Attempt: strconv.Itoa(a.Attempt),
			Status: "—", Latency: strconv.FormatInt(a.LatencyMS, 10) + " ms", Excerpt: a.ResponseExcerpt, Error: orDash(a.Error), Next: "—",
			Succeeded: a.Succeeded, Redeliver: !slices.Contains(seen, a.EventID)}
		if a.Redelivery {
			row.Attempt = web.T(l, "dash.hook.redelivery")
		}
		if a.StatusCode != nil {
			row.Status = strconv.Itoa(*a.StatusCode)
		}
		if a.NextAttemptAt != nil {
			row.Next = s.ts(l, time.Time(*a.NextAttemptAt))
		}
		seen = append(seen, a.EventID)
		v.Attempts = append(v.Attempts, row)
		last = a.ID
	}
	if r.Method == http.MethodGet {
		v.Next = nextLink(r, log.HasMore, last)
	}
	p.Data = v
	return s.dashRenderTitled(w, r, status, "dash_webhook", "webhooks", "dash.hook.title", p)
}

func (s *Server) dashWebhook(w http.ResponseWriter, r *http.Request) error {
	return s.hookPage(w, r, http.StatusOK, web.Page{})
}

// dashRedeliverWebhook sends the form's event_id to the endpoint again
// (once, as the API's redeliver); a disabled endpoint (409) shows the page
// with the refusal, an event of another account or environment is 404.
func (s *Server) dashRedeliverWebhook(w http.ResponseWriter, r *http.Request) error {
	ev := r.PostForm.Get("event_id")
	_, err := s.Webhooks.Redeliver(r.Context(), claimOf(r), dashPrincipal(r), r.PathValue("endpoint_id"), ev)
	return actionOutcome(w, r, err, s.hookPage, web.T(lang(r), "dash.hook.redelivering", ev))
}
