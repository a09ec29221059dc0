package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/invoicedelivery"
	"github.com/farebox/farebox/internal/smtpmail"
	"github.com/farebox/farebox/internal/smtpmail/smtptest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// deliveryJSON is a delivery as a partner decodes it.
type deliveryJSON struct {
	ID, Object, Channel, Recipient, Status string
	InvoiceID                              string `json:"invoice_id"`
	Attempts                               []struct {
		Attempt        int
		Outcome, Reply string
	}
}

// relayFor is a server whose documents go through a real SMTP relay on
// loopback (STARTTLS, AUTH PLAIN) that answers the data with *code (0:
// accepted).
func relayFor(t *testing.T, engine store.Engine, o smtptest.Options, code *atomic.Int32) (*apitest.Env, *smtptest.Server) {
	t.Helper()
	return relayOn(t, storetest.Open(t, engine), o, code)
}

// relayOn is relayFor on the store s.
func relayOn(t *testing.T, s *store.Store, o smtptest.Options, code *atomic.Int32) (*apitest.Env, *smtptest.Server) {
	t.Helper()
	o.Refuse = func(int) *gosmtp.SMTPError {
		switch c := int(code.Load()); {
		case c == 0:
			return nil
		default:
			return &gosmtp.SMTPError{Code: c, EnhancedCode: gosmtp.EnhancedCode{c / 100, 7, 1}, Message: "mailbox busy or refused"}
		}
	}
	srv := smtptest.Start(t, o)
	r, err := smtpmail.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	r.TLS = srv.Client
	from := mail.Address{Name: "Verkehrsverbund Süd – Rechnungen", Address: "rechnung@farebox.example"}
	return apitest.NewOnStore(t, s, apitest.Options{Now: time.Date(2026, 10, 15, 8, 0, 0, 0, time.UTC),
		Transports: invoicedelivery.EmailOver(r, from)}), srv
}

// issueTo assigns item id to customer and invoices it.
func issueTo(t *testing.T, e *apitest.Env, key, id, customer string, body any) InvoiceJSON {
	t.Helper()
	put(t, e, key, id, map[string]any{"customer_id": customer})
	return issue(t, e, key, id, customer, body)
}

func deliveries(t *testing.T, e *apitest.Env, invoiceID string) []deliveryJSON {
	t.Helper()
	var out struct{ Data []deliveryJSON }
	e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/invoices/" + invoiceID + "/deliveries.json", Key: e.LiveKey}).JSON(t, &out)
	return out.Data
}

// TestInvoiceDelivery (both engines): a document of a buyer with an EM
// address is delivered over STARTTLS with AUTH when its jobs run: the
// delivery is written with the document, the message carries the UBL
// download's bytes under an RFC 2231 filename, the buyer's name and the
// subject decode back from RFC 2047, the log holds the relay's reply and
// invoice.sent is written. Cancellations and payment notices go the same
// way; a 4xx defers and is retried with backoff, a 5xx fails with the
// reply (invoice.delivery_failed), a resend while one is under way is 409
// and a Leitweg-ID buyer gets nothing by e-mail. No answer is a 5xx.
func TestInvoiceDelivery(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		var code atomic.Int32
		e, srv := relayFor(t, engine, smtptest.Options{User: "farebox", Pass: "s3cret:pässword", UTF8: true}, &code)
		key := e.LiveKey
		name := "شركة النقل Müller 東京 🚆"
		cust := newCustomer(t, e, key, []string{"Müller Verkehr GmbH", "Große Straße 5", "01067 Dresden"},
			electronic(name, "EM", "eingang@müller.example", "KST-4711", "01067"))
		items := orderSingles(t, e, key, 2)
		inv := issueTo(t, e, key, items[0], cust, map[string]any{"subject": "Rechnung {{invoice_number}}"})
		// The delivery is in the document's transaction: there before any job ran.
		ds := deliveries(t, e, inv.InvoiceID)
		if len(ds) != 1 || ds[0].Status != "pending" || ds[0].Channel != "email" || ds[0].Recipient != "eingang@müller.example" ||
			ds[0].Object != "invoice_delivery" || len(ds[0].Attempts) != 0 {
			t.Fatalf("deliveries after issuing: %+v", ds)
		}
		runJobs(t, e)
		ds = deliveries(t, e, inv.InvoiceID)
		if len(ds) != 1 || ds[0].Status != "sent" || len(ds[0].Attempts) != 1 || !strings.HasPrefix(ds[0].Attempts[0].Reply, "250 ") {
			t.Fatalf("deliveries after the jobs: %+v", ds)
		}
		msgs := srv.Messages()
		if len(msgs) != 1 || !msgs[0].TLS || msgs[0].User != "farebox" || msgs[0].To != "eingang@müller.example" || msgs[0].From != "rechnung@farebox.example" {
			t.Fatalf("received %d messages: %+v", len(msgs), msgs)
		}
		ubl := get(t, e, inv.UBLURL, 200).Body
		checkDelivered(t, msgs[0].Data, name, "Rechnung "+inv.InvoiceNumber, inv.InvoiceNumber+".xml", "<"+ds[0].ID+"@farebox.example>", ubl)
		sent := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/events.json?type=invoice.sent", Key: key}).Map(t)["data"].([]any)
		if len(sent) != 1 || sent[0].(map[string]any)["data"].(map[string]any)["object"].(map[string]any)["status"] != "sent" {
			t.Errorf("invoice.sent events: %v", sent)
		}

		// A resend while the relay defers: deferred with the reply, retried
		// after the backoff, then sent; meanwhile another resend is 409.
		code.Store(451)
		e.Clock.Advance(time.Minute)
		var rs deliveryJSON
		e.Must(202, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + inv.InvoiceID + "/deliveries.json", Key: key}).JSON(t, &rs)
		runJobs(t, e)
		ds = deliveries(t, e, inv.InvoiceID)
		if len(ds) != 2 || ds[1].ID != rs.ID || ds[1].Status != "deferred" || !strings.Contains(ds[1].Attempts[0].Reply, "451 4.7.1 mailbox busy") {
			t.Fatalf("after a 451: %+v", ds)
		}
		e.Must(409, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + inv.InvoiceID + "/deliveries.json", Key: key})
		code.Store(0)
		e.Clock.Advance(5 * time.Second)
		runJobs(t, e)
		if ds = deliveries(t, e, inv.InvoiceID); ds[1].Status != "sent" || len(ds[1].Attempts) != 2 {
			t.Fatalf("after the retry: %+v", ds[1])
		}

		// A cancellation and a payment notice are delivered too; a 5xx
		// fails the notice's delivery with the reply.
		var cancel, notice InvoiceJSON
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + inv.InvoiceID + "/cancel.json", Key: key}).JSON(t, &cancel)
		runJobs(t, e)
		inv2 := issueTo(t, e, key, items[1], cust, nil)
		runJobs(t, e)
		code.Store(554)
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + inv2.InvoiceID + "/payment_notice.json", Key: key}).JSON(t, &notice)
		runJobs(t, e)
		if ds := deliveries(t, e, cancel.InvoiceID); len(ds) != 1 || ds[0].Status != "sent" {
			t.Errorf("cancellation: %+v", ds)
		}
		ds = deliveries(t, e, notice.InvoiceID)
		if len(ds) != 1 || ds[0].Status != "failed" || len(ds[0].Attempts) != 1 || !strings.HasPrefix(ds[0].Attempts[0].Reply, "554 5.7.1 mailbox busy or refused") {
			t.Errorf("notice refused with 554: %+v", ds)
		}
		msgs = srv.Messages()
		subjects := map[string]bool{}
		var dec mime.WordDecoder
		for _, m := range msgs {
			mm, err := mail.ReadMessage(bytes.NewReader(m.Data))
			if err != nil {
				t.Fatal(err)
			}
			s, _ := dec.DecodeHeader(mm.Header.Get("Subject"))
			subjects[strings.Fields(s)[0]] = true
		}
		if !subjects["Rechnung"] || !subjects["Stornorechnung"] || !subjects["Zahlungsaufforderung"] {
			t.Errorf("subjects: %v", subjects)
		}
		failed := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/events.json?type=invoice.delivery_failed", Key: key}).Map(t)["data"].([]any)
		if len(failed) != 1 || failed[0].(map[string]any)["data"].(map[string]any)["object_id"] != ds[0].ID {
			t.Errorf("invoice.delivery_failed events: %v", failed)
		}

		// Buyers not reached by e-mail: a Leitweg-ID (Peppol) and one without
		// electronic invoicing. Their documents get no delivery, a resend
		// is refused naming why, and a foreign document is 404.
		amt := newCustomer(t, e, key, []string{"Stadt Beispielstadt", "Rathausplatz 1", "04109 Leipzig"},
			electronic("Stadt Beispielstadt", "0204", "04011000-12345-67", "04011000-12345-67", "04109"))
		plain := newCustomer(t, e, key, []string{"Łukasz Wójcik", "Weg 1", "12345 Berlin"}, nil)
		more := orderSingles(t, e, key, 2)
		for i, c := range []struct {
			customer string
			status   int
			code     string
		}{{amt, 409, invoicedelivery.CodeChannelUnavailable}, {plain, 422, invoicedelivery.CodeNoElectronicAddress}} {
			doc := issueTo(t, e, key, more[i], c.customer, nil)
			if ds := deliveries(t, e, doc.InvoiceID); len(ds) != 0 {
				t.Errorf("%s: deliveries %+v", c.code, ds)
			}
			r := e.Must(c.status, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + doc.InvoiceID + "/deliveries.json", Key: key})
			if got := r.Map(t)["code"]; got != c.code {
				t.Errorf("resend: code %v, want %s", got, c.code)
			}
		}
		_, otherKey := e.NewAccount("Other GmbH", "live")
		e.Must(404, apitest.Req{Method: "GET", Path: "/v9/ticketing/invoices/" + inv.InvoiceID + "/deliveries.json", Key: otherKey})
		e.Must(404, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + inv.InvoiceID + "/deliveries.json", Key: otherKey})
		e.Must(400, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + inv.InvoiceID + "/deliveries.json", Key: key,
			Body: map[string]any{"recipient": "attacker@example.com"}})
		if n := len(srv.Messages()); n != len(msgs) {
			t.Errorf("%d messages after the refusals, want %d", n, len(msgs))
		}
	})
}

// checkDelivered checks a received message: headers (From, To with the
// buyer's name, Subject, Date, Message-ID), multipart/mixed with a text
// part and the attachment, whose bytes are want.
func checkDelivered(t *testing.T, data []byte, name, subject, file, messageID string, want []byte) {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	to, err := m.Header.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Name != name {
		t.Errorf("To = %v, %v; want %q", to, err, name)
	}
	from, err := m.Header.AddressList("From")
	if err != nil || from[0].Name != "Verkehrsverbund Süd – Rechnungen" || from[0].Address != "rechnung@farebox.example" {
		t.Errorf("From = %v, %v", from, err)
	}
	var dec mime.WordDecoder
	if s, err := dec.DecodeHeader(m.Header.Get("Subject")); err != nil || !strings.HasPrefix(s, subject+" – ") {
		t.Errorf("Subject = %q, %v; want %q …", s, err, subject)
	}
	if _, err := m.Header.Date(); err != nil || m.Header.Get("Message-ID") != messageID {
		t.Errorf("Date: %v; Message-ID %q, want %q", err, m.Header.Get("Message-ID"), messageID)
	}
	_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	text, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(text); !strings.Contains(string(b), "XRechnung") {
		t.Errorf("text: %q", b)
	}
	att, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(att)
	got, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(string(raw), "\r\n", ""))
	if att.FileName() != file || err != nil || !bytes.Equal(got, want) || att.Header.Get("Content-Type") != "application/xml; name="+file {
		t.Errorf("attachment %q (%q), %d bytes, %v; want %q and the download's %d bytes", att.FileName(), att.Header.Get("Content-Type"), len(got), err, file, len(want))
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("more than two parts: %v", err)
	}
}

// TestInvoiceDeliveryNoSTARTTLS: a relay that offers no STARTTLS while
// credentials are configured never sees them: the delivery fails at once
// with the reason, the invoice stands.
func TestInvoiceDeliveryNoSTARTTLS(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		var code atomic.Int32
		e, srv := relayFor(t, engine, smtptest.Options{NoTLS: true, User: "farebox", Pass: "secret"}, &code)
		cust := newCustomer(t, e, e.LiveKey, []string{"Müller"}, electronic("Müller", "EM", "a@b.de", "R", "01067"))
		inv := issueTo(t, e, e.LiveKey, orderSingles(t, e, e.LiveKey, 1)[0], cust, nil)
		runJobs(t, e)
		ds := deliveries(t, e, inv.InvoiceID)
		if len(ds) != 1 || ds[0].Status != "failed" || !strings.Contains(ds[0].Attempts[0].Reply, "STARTTLS") {
			t.Errorf("deliveries: %+v", ds)
		}
		if srv.ClearAuth() != 0 || len(srv.Messages()) != 0 {
			t.Errorf("AUTH in clear %d times, %d messages", srv.ClearAuth(), len(srv.Messages()))
		}
		e.Must(200, apitest.Req{Method: "GET", Path: "/v5/ticketing/invoices/" + inv.InvoiceID + ".json", Key: e.LiveKey})
	})
}

// TestInvoiceDeliveryRetriesRunOut: a relay that defers every attempt
// gets invoicing.DeliverMaxAttempts of them, backing off, and the last
// fails the delivery (invoice.delivery_failed); none is lost.
func TestInvoiceDeliveryRetriesRunOut(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		var code atomic.Int32
		code.Store(421)
		e, srv := relayFor(t, engine, smtptest.Options{User: "u", Pass: "p"}, &code)
		cust := newCustomer(t, e, e.LiveKey, []string{"Müller"}, electronic("Müller", "EM", "a@b.de", "R", "01067"))
		inv := issueTo(t, e, e.LiveKey, orderSingles(t, e, e.LiveKey, 1)[0], cust, nil)
		runJobs(t, e)
		for n := 1; n < 16; n++ {
			// Not again at once: the next attempt waits for its backoff
			// (2 s doubling, capped at 10 minutes, up to 25 % jitter).
			e.Clock.Advance(time.Second)
			runJobs(t, e)
			if ds := deliveries(t, e, inv.InvoiceID); len(ds[0].Attempts) != n || ds[0].Status != "deferred" {
				t.Fatalf("a second after attempt %d: %s with %d attempts", n, ds[0].Status, len(ds[0].Attempts))
			}
			e.Clock.Advance(13 * time.Minute)
			runJobs(t, e)
		}
		ds := deliveries(t, e, inv.InvoiceID)
		if ds[0].Status != "failed" || len(ds[0].Attempts) != 16 || len(srv.Messages()) != 16 || ds[0].Attempts[15].Outcome != "failed" ||
			!strings.HasPrefix(ds[0].Attempts[15].Reply, "421 4.7.1") {
			t.Fatalf("after the retries: %+v, %d messages", ds[0], len(srv.Messages()))
		}
		failed := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/events.json?type=invoice.delivery_failed", Key: e.LiveKey}).Map(t)["data"].([]any)
		if len(failed) != 1 {
			t.Errorf("invoice.delivery_failed events: %d", len(failed))
		}
	})
}

// TestInvoiceDeliveryCrash (both engines): the delivery is written in the
// document's transaction, so an instance that dies after issuing (its jobs
// claimed, never finished) loses nothing: another instance on the database
// takes the jobs over after the lease and the buyer gets the document.
// A request that fails writes no delivery, and an instance without
// --smtp-url writes none and refuses a resend.
func TestInvoiceDeliveryCrash(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, s *store.Store) {
		var code atomic.Int32
		e1, _ := relayOn(t, s, smtptest.Options{User: "u", Pass: "p"}, &code)
		cust := newCustomer(t, e1, e1.LiveKey, []string{"Firma"}, electronic("Firma", "EM", "re@firma.example", "R-1", "01234"))
		id := orderSingles(t, e1, e1.LiveKey, 1)[0]
		inv := issueTo(t, e1, e1.LiveKey, id, cust, nil)
		e1.Must(409, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_item/" + id + "/invoice/" + cust + ".json", Key: e1.LiveKey})
		if n := count(t, e1, "invoice_deliveries"); n != 1 {
			t.Fatalf("%d deliveries after one invoice and one refused request", n)
		}
		claimed, err := s.Jobs().Claim(context.Background(), "crashed-instance", e1.Clock.Now(), 2*time.Minute, 10)
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		e2, srv2 := relayOn(t, s, smtptest.Options{User: "u", Pass: "p"}, &code)
		e2.Clock.Set(e1.Clock.Now().Add(3 * time.Minute))
		runJobs(t, e2)
		e2.LiveKey = e1.LiveKey // the document's account
		if ds := deliveries(t, e2, inv.InvoiceID); len(ds) != 1 || ds[0].Status != "sent" || len(srv2.Messages()) != 1 {
			t.Fatalf("after the takeover: %+v, %d messages", ds, len(srv2.Messages()))
		}

		// A deferred delivery whose job died (an operator's matter) no
		// longer blocks a resend.
		code.Store(451)
		inv3 := issueTo(t, e2, e2.LiveKey, orderSingles(t, e2, e2.LiveKey, 1)[0], cust, nil)
		runJobs(t, e2)
		resend3 := apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + inv3.InvoiceID + "/deliveries.json", Key: e2.LiveKey}
		e2.Must(409, resend3)
		e2.Clock.Advance(15 * time.Minute)
		js, err := s.Jobs().Claim(context.Background(), "w", e2.Clock.Now(), time.Minute, 10)
		if err != nil || len(js) != 1 || js[0].Kind != "invoice.deliver" {
			t.Fatalf("claim of the deferred attempt: %+v %v", js, err)
		}
		if err := s.Jobs().Retry(context.Background(), js[0].ID, "w", e2.Clock.Now(), e2.Clock.Now(), "given up", true); err != nil {
			t.Fatal(err)
		}
		code.Store(0)
		e2.Must(202, resend3)
		runJobs(t, e2)
		if ds := deliveries(t, e2, inv3.InvoiceID); len(ds) != 2 || ds[0].Status != "deferred" || ds[1].Status != "sent" {
			t.Errorf("after the resend past a dead job: %+v", ds)
		}

		plain := apitest.NewOnStore(t, s, apitest.Options{Now: e2.Clock.Now()})
		key := plain.LiveKey
		c2 := newCustomer(t, plain, key, []string{"Firma"}, electronic("Firma", "EM", "re@firma.example", "R-1", "01234"))
		inv2 := issueTo(t, plain, key, orderSingles(t, plain, key, 1)[0], c2, nil)
		runJobs(t, plain)
		if ds := deliveries(t, plain, inv2.InvoiceID); len(ds) != 0 {
			t.Errorf("deliveries without --smtp-url: %+v", ds)
		}
		r := plain.Must(409, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + inv2.InvoiceID + "/deliveries.json", Key: key})
		if r.Map(t)["code"] != invoicedelivery.CodeChannelUnavailable {
			t.Errorf("resend without --smtp-url: %s", r.Body)
		}
	})
}

// TestDashboardInvoiceDeliveries (both engines): the invoice list links
// each document's delivery log; the log shows the relay's reply, and its
// button (a CSRF-checked form) sends the document again; a refusal shows
// the log with the reason, another account's document is 404.
func TestDashboardInvoiceDeliveries(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		var code atomic.Int32
		e, srv := relayFor(t, engine, smtptest.Options{User: "u", Pass: "p", UTF8: true}, &code)
		key := e.LiveKey
		cust := newCustomer(t, e, key, []string{"Müller"}, electronic("Müller", "EM", "büro@müller.example", "R", "01067"))
		plain := newCustomer(t, e, key, []string{"Łukasz Wójcik"}, nil)
		items := orderSingles(t, e, key, 2)
		inv := issueTo(t, e, key, items[0], cust, nil)
		pdfOnly := issueTo(t, e, key, items[1], plain, nil)
		runJobs(t, e)
		v := dashSignedIn(t, e, "invoices@partner.example")
		log := "/dashboard/live/invoices/" + inv.InvoiceID + "/deliveries"
		if l := v.must(200, "GET", "/dashboard/live/invoices", nil); !strings.Contains(l.Body, `href="`+log+`"`) {
			t.Errorf("the invoice list lacks the delivery log link:\n%.4000s", l.Body)
		}
		p := v.must(200, "GET", log, nil)
		for _, want := range []string{"büro@müller.example", "250 2.0.0", `id="resend"`, `aria-current="page"`} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("delivery log lacks %s:\n%.4000s", want, p.Body)
			}
		}
		resend := "/dashboard/live/invoices/" + inv.InvoiceID + "/resend"
		v.must(http.StatusForbidden, "POST", resend, url.Values{})
		if r := v.must(200, "POST", resend, url.Values{"csrf_token": {p.csrf(t)}}); !strings.Contains(r.Body, `role="status"`) || !strings.Contains(r.Body, "pending") {
			t.Errorf("resend: %.4000s", r.Body)
		}
		runJobs(t, e)
		if n := len(srv.Messages()); n != 2 {
			t.Errorf("%d messages after the resend, want 2", n)
		}
		if r := v.must(422, "POST", "/dashboard/live/invoices/"+pdfOnly.InvoiceID+"/resend", url.Values{"csrf_token": {p.csrf(t)}}); !strings.Contains(r.Body, "no electronic address") {
			t.Errorf("resend of a PDF-only document: %.4000s", r.Body)
		}
		v.must(404, "GET", "/dashboard/test/invoices/"+inv.InvoiceID+"/deliveries", nil)
	})
}

// TestResendMarksItsClaim is TestEveryIdempotentChangeMarksItsClaim's case
// of the resend, which needs a relay: the resend's delivery and job are
// committed with its Idempotency-Key claim, and a retry replays the answer
// instead of sending again.
func TestResendMarksItsClaim(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		var code atomic.Int32
		e, srv := relayFor(t, engine, smtptest.Options{}, &code)
		key := e.LiveKey
		cust := newCustomer(t, e, key, []string{"Müller Verkehr GmbH", "Große Straße 5", "01067 Dresden"},
			electronic("Müller", "EM", "eingang@mueller.example", "KST-4711", "01067"))
		inv := issueTo(t, e, key, orderSingles(t, e, key, 1)[0], cust, nil)
		runJobs(t, e)
		path := "/v9/ticketing/invoices/" + inv.InvoiceID + "/deliveries.json"
		h := map[string]string{"Idempotency-Key": "resend-1"}
		first := e.Must(202, apitest.Req{Method: "POST", Path: path, Key: key, Header: h})
		if first.Header.Get("Idempotency-Replayed") != "false" {
			t.Fatalf("first resend: Idempotency-Replayed %q", first.Header.Get("Idempotency-Replayed"))
		}
		if !claimCommitted(t, e, "account:"+e.AccountID+":live", "resend-1") {
			t.Fatal("the resend committed its delivery without marking its Idempotency-Key claim")
		}
		again := e.Must(202, apitest.Req{Method: "POST", Path: path, Key: key, Header: h})
		if again.Header.Get("Idempotency-Replayed") != "true" || !bytes.Equal(again.Body, first.Body) {
			t.Fatalf("retried resend: Idempotency-Replayed %q, body %s, first %s", again.Header.Get("Idempotency-Replayed"), again.Body, first.Body)
		}
		runJobs(t, e)
		if ds := deliveries(t, e, inv.InvoiceID); len(ds) != 2 || len(srv.Messages()) != 2 {
			t.Fatalf("after a resend and its retry: %d deliveries, %d messages; want 2 and 2", len(ds), len(srv.Messages()))
		}
	})
}
