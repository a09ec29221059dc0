package httpapi

import (
	"bytes"
	"net/http"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/web"
)

// The inspector app (docs/inspect.md): one page in German and English that
// holds the sign-in and the camera view, its scripts, service worker and
// manifest. Everything it reads is public (keys, revocation feed,
// blocklist); what it writes goes through POST /v1/inspection/sign-in.json
// and POST /v1/inspection/records.json.

// inspectPage is GET /inspect.
func (s *Server) inspectPage(w http.ResponseWriter, r *http.Request) error {
	l := lang(r)
	var buf bytes.Buffer
	if err := web.Render(&buf, "inspect", web.Page{Lang: l, Title: web.T(l, "inspect.title"), Path: "/inspect", Switch: true, Now: s.app.Now()}); err != nil {
		return apperr.Wrap("render", err)
	}
	web.Headers(w.Header())
	// Its own policy: the pages' one, plus the manifest and the camera.
	w.Header().Set("Content-Security-Policy", web.InspectPolicy)
	_, err := w.Write(buf.Bytes())
	return err
}

// inspectFile is GET /inspect/{file}: the app's scripts, service worker
// (allowed to control /inspect), manifest, icon and the decoder's licence.
func (s *Server) inspectFile(w http.ResponseWriter, r *http.Request) error {
	body, ct, ok := web.InspectAsset(r.PathValue("file"))
	if !ok {
		return apperr.NotFoundf("httpapi.inspectFile", CodeNotFound)
	}
	if r.PathValue("file") != "sw.js" {
		return writeAsset(w, ct, body)
	}
	// The worker is checked for updates on every load.
	w.Header().Set("Service-Worker-Allowed", "/inspect")
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, err := w.Write(body)
	return err
}
