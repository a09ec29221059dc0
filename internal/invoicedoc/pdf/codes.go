package pdf

// The error codes of package pdf: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeInvoiceMissing   = "invoice_missing"
	CodeNoticeNotFacturx = "notice_not_facturx"
	CodeRenderFailed     = "pdf_render_failed"
	CodeRendererBusy     = "renderer_busy" // the renderer's queue is full or the render's turn came too late (queue.go)
)
