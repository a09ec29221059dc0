package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/records"
	"github.com/farebox/farebox/internal/app/webusers"
)

// reqState is what the pipeline learns about one request as it goes.
type reqState struct {
	id        string
	start     time.Time
	route     string // "METHOD /path/{template}" of the matched route
	strict    bool   // reject unknown JSON fields (partner endpoints)
	principal *app.Principal
	// page: the route is a web page (HTML errors, CSRF on POST);
	// operator is its console session.
	page     bool
	operator *webusers.WebSession
	// dashboard is a partner dashboard user's session.
	dashboard *webusers.WebSession
	// inspector is the inspection device of an authInspector row.
	inspector *records.Device

	// Attribution for the usage ledger when there is no principal (SDK
	// endpoints bill the account that owns the coupon or ticket).
	attrAccount string
	attrEnv     app.Environment
	// uncounted, when set, is why the request is not billed.
	uncounted string
	// claim is the Idempotency-Key the request holds (idempotent), the
	// zero Claim without one.
	claim app.Claim
}

type stateKey struct{}

// withState is r with ctx (one of r's contexts) holding st.
func withState(ctx context.Context, r *http.Request, st *reqState) *http.Request {
	return r.WithContext(context.WithValue(ctx, stateKey{}, st))
}

// state returns the request's pipeline state (a zero one outside the pipeline).
func state(r *http.Request) *reqState {
	if st, ok := r.Context().Value(stateKey{}).(*reqState); ok {
		return st
	}
	return &reqState{}
}

// billTo bills a keyless request to the account owning the record it
// names (attribution.go; the route table says which record).
func billTo(r *http.Request, o app.Owner) {
	st := state(r)
	st.attrAccount, st.attrEnv = o.AccountID, o.Environment
}

// claimOf is the Idempotency-Key claim the request holds, for the use case
// whose write commits the request's change (the zero Claim: none).
func claimOf(r *http.Request) app.Claim { return state(r).claim }

// markUncounted records why this request is not billed (e.g. a session block).
func markUncounted(r *http.Request, reason string) { state(r).uncounted = reason }

// principalOf returns the authenticated caller; routes with partner or
// transit auth always have one.
func principalOf(r *http.Request) app.Principal {
	if p := state(r).principal; p != nil {
		return *p
	}
	return app.Principal{}
}

// buffer is a ResponseWriter that holds the response until the pipeline
// decides it may leave (after idempotency storage and the ledger commit).
type buffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

// buffers recycles response buffers: a departure board is 4 KB that would
// otherwise be allocated and zeroed for every request.
var buffers = sync.Pool{New: func() any { return &buffer{header: http.Header{}} }}

func newBuffer() *buffer { return buffers.Get().(*buffer) }

// maxPooledBody is the largest body capacity kept for reuse (a PDF or a
// long listing does not pin its memory in the pool). A board of 100
// departures with service alerts is 100–250 KB (docs/departures.md); at 64
// KB every such request allocated and zeroed a fresh 128–256 KB buffer.
const maxPooledBody = 256 << 10

// release returns b to the pool once its response has been written.
func (b *buffer) release() {
	if b.body.Cap() > maxPooledBody {
		return
	}
	clear(b.header)
	b.status = 0
	b.body.Reset()
	buffers.Put(b)
}

func (b *buffer) Header() http.Header { return b.header }

func (b *buffer) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *buffer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// reset discards what the handler wrote (to replace it by an error).
func (b *buffer) reset() {
	b.header = http.Header{}
	b.status = 0
	b.body.Reset()
}

// flush copies the buffered response to w.
func (b *buffer) flush(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range b.header {
		h[k] = v
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	// The whole body is known: say its length, so a large response goes
	// out in one piece instead of chunked.
	if _, ok := h["Content-Length"]; !ok && b.body.Len() > 0 {
		h["Content-Length"] = []string{strconv.Itoa(b.body.Len())}
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}
