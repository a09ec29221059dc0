package smtpmail_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/farebox/farebox/internal/smtpmail"
	"github.com/farebox/farebox/internal/smtpmail/smtptest"
)

func relay(t *testing.T, srv *smtptest.Server) *smtpmail.Relay {
	t.Helper()
	r, err := smtpmail.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	r.TLS = srv.Client
	return r
}

// names and subjects in every script a buyer or seller may write.
var scripts = []struct{ name, subject, file string }{
	{"Müller & Söhne GmbH, Köln", "Rechnung 2026-000001 über 380,00 € – Grüße", "Rechnung_Müller.xml"},
	{"شركة النقل العربية", "فاتورة رقم 2026-000002", "فاتورة.xml"},
	{"東京交通株式会社", "請求書 2026-000003 のお知らせ", "請求書.pdf"},
	{"🚆 Bahn-Fans e.V. 🎫", "Ticket 🎫 invoice 🚆 with a very long subject that goes on and on to force folding of the encoded words", "🎫.xml"},
	{"O'Brien, \"Jack\"", "plain ASCII subject", "invoice.xml"},
}

func message(name, subject, file string, body []byte) smtpmail.Message {
	return smtpmail.Message{From: mail.Address{Name: "Verkehrsverbund Süd", Address: "rechnung@seller.example"},
		To: mail.Address{Name: name, Address: "buyer@example.com"}, Subject: subject,
		Date: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC), MessageID: "farebox-delivery-1@seller.example",
		Text:        "Guten Tag,\n\nanbei die Rechnung.\n.\nEine Zeile mit nur einem Punkt oben.\n",
		Attachments: []smtpmail.Attachment{{Name: file, ContentType: "application/xml", Body: body}}}
}

// TestSendSTARTTLSAuth: over STARTTLS with AUTH PLAIN, each message
// arrives as sent: headers decoded back to the names and subject in
// Arabic, CJK, emoji and umlauts (RFC 2047), the attachment's filename
// (RFC 2231) and bytes, every header line folded and ASCII.
func TestSendSTARTTLSAuth(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{User: "farebox", Pass: "p@ss:wörd/1"})
	r := relay(t, srv)
	body := bytes.Repeat([]byte("<Invoice>ä\x00\xff\r\n.\r\n</Invoice>"), 500)
	for i, sc := range scripts {
		reply, err := r.Send(context.Background(), message(sc.name, sc.subject, sc.file, body))
		if err != nil || !strings.HasPrefix(reply, "250") {
			t.Fatalf("%s: Send = %q, %v", sc.name, reply, err)
		}
		got := srv.Messages()[i]
		if !got.TLS || got.User != "farebox" || got.From != "rechnung@seller.example" || got.To != "buyer@example.com" {
			t.Errorf("%s: received %+v (without data)", sc.name, got.From+" "+got.To+" "+got.User)
		}
		checkMessage(t, got.Data, sc.name, sc.subject, sc.file, body)
	}
	if srv.ClearAuth() != 0 {
		t.Error("AUTH in clear")
	}
}

func checkMessage(t *testing.T, data []byte, name, subject, file string, body []byte) {
	t.Helper()
	head, _, _ := bytes.Cut(data, []byte("\r\n\r\n"))
	for _, l := range strings.Split(string(head), "\r\n") {
		if len(l) > 78 {
			t.Errorf("header line of %d characters: %q", len(l), l)
		}
	}
	for _, c := range data {
		if c >= 0x80 {
			t.Fatalf("a byte ≥ 0x80 in the message: %q", data)
		}
	}
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	to, err := m.Header.AddressList("To")
	if err != nil || to[0].Name != name || to[0].Address != "buyer@example.com" {
		t.Errorf("To = %v, %v; want %q", to, err, name)
	}
	from, err := m.Header.AddressList("From")
	if err != nil || from[0].Name != "Verkehrsverbund Süd" {
		t.Errorf("From = %v, %v", from, err)
	}
	var dec mime.WordDecoder
	if s, err := dec.DecodeHeader(m.Header.Get("Subject")); err != nil || s != subject {
		t.Errorf("Subject = %q, %v; want %q", s, err, subject)
	}
	if d, err := m.Header.Date(); err != nil || !d.Equal(time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("Date = %v, %v", d, err)
	}
	if id := m.Header.Get("Message-ID"); id != "<farebox-delivery-1@seller.example>" || m.Header.Get("MIME-Version") != "1.0" {
		t.Errorf("Message-ID %q, MIME-Version %q", id, m.Header.Get("MIME-Version"))
	}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" {
		t.Fatalf("Content-Type %q, %v", mt, err)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	text, err := mr.NextPart() // quoted-printable is decoded by the reader
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := io.ReadAll(text)
	if !strings.Contains(string(tb), "anbei die Rechnung.\r\n.\r\nEine Zeile") || text.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("text part %q %q", tb, text.Header.Get("Content-Type"))
	}
	att, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	if att.FileName() != file {
		t.Errorf("attachment filename %q, want %q (Content-Disposition %q)", att.FileName(), file, att.Header.Get("Content-Disposition"))
	}
	if _, p, _ := mime.ParseMediaType(att.Header.Get("Content-Type")); p["name"] != file {
		t.Errorf("attachment name %q, want %q", p["name"], file)
	}
	raw, _ := io.ReadAll(att)
	got, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(string(raw), "\r\n", ""))
	if err != nil || !bytes.Equal(got, body) {
		t.Errorf("attachment bytes differ (%d vs %d), %v", len(got), len(body), err)
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("a third part: %v", err)
	}
}

// TestSendNoSTARTTLS: a relay that offers no STARTTLS gets no credentials
// (a permanent failure, nothing sent), but a message without credentials.
func TestSendNoSTARTTLS(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{NoTLS: true, User: "farebox", Pass: "secret"})
	_, err := relay(t, srv).Send(context.Background(), message("A", "B", "c.xml", []byte("x")))
	var e *smtpmail.Error
	if !errors.As(err, &e) || e != smtpmail.ErrClearCredentials || e.Temporary {
		t.Fatalf("Send = %v, want ErrClearCredentials", err)
	}
	if srv.ClearAuth() != 0 || len(srv.Messages()) != 0 {
		t.Errorf("AUTH in clear %d times, %d messages", srv.ClearAuth(), len(srv.Messages()))
	}
	open := smtptest.Start(t, smtptest.Options{NoTLS: true})
	if _, err := relay(t, open).Send(context.Background(), message("A", "B", "c.xml", []byte("x"))); err != nil || len(open.Messages()) != 1 {
		t.Fatalf("Send without credentials = %v, %d messages", err, len(open.Messages()))
	}
}

// TestSendRefused: a 4xx to the data is a temporary error with the reply,
// a 5xx a permanent one; an unreachable relay and an untrusted
// certificate fail without a reply code.
func TestSendRefused(t *testing.T) {
	for _, c := range []struct {
		code      int
		temporary bool
	}{{451, true}, {452, true}, {554, false}, {552, false}} {
		srv := smtptest.Start(t, smtptest.Options{Refuse: func(int) *gosmtp.SMTPError {
			return &gosmtp.SMTPError{Code: c.code, EnhancedCode: gosmtp.EnhancedCode{c.code / 100, 7, 1}, Message: "refused by policy"}
		}})
		_, err := relay(t, srv).Send(context.Background(), message("A", "B", "c.xml", []byte("x")))
		var e *smtpmail.Error
		if !errors.As(err, &e) || e.Code != c.code || e.Temporary != c.temporary || !strings.Contains(e.Reply, "refused by policy") {
			t.Errorf("%d: Send = %#v", c.code, err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r, _ := smtpmail.ParseURL("smtp://" + addr)
	_, err = r.Send(context.Background(), message("A", "B", "c.xml", []byte("x")))
	var e *smtpmail.Error
	if !errors.As(err, &e) || !e.Temporary || e.Code != 0 {
		t.Errorf("unreachable: %#v", err)
	}
	srv := smtptest.Start(t, smtptest.Options{})
	untrusted := relay(t, srv)
	untrusted.TLS = nil // the system roots do not know the test certificate
	if _, err := untrusted.Send(context.Background(), message("A", "B", "c.xml", []byte("x"))); !errors.As(err, &e) || e.Temporary ||
		!strings.Contains(e.Reply, "certificate") || len(srv.Messages()) != 0 {
		t.Errorf("untrusted certificate: %#v", err)
	}
}

// TestSendInternationalAddress: an address with non-ASCII characters
// goes to a relay that offers SMTPUTF8 (RFC 6531) and is refused, nothing
// sent, by one that does not.
func TestSendInternationalAddress(t *testing.T) {
	m := message("Müller", "Rechnung", "r.xml", []byte("x"))
	m.To.Address = "büro@müller.example"
	utf8 := smtptest.Start(t, smtptest.Options{UTF8: true})
	if _, err := relay(t, utf8).Send(context.Background(), m); err != nil || len(utf8.Messages()) != 1 || utf8.Messages()[0].To != "büro@müller.example" {
		t.Fatalf("with SMTPUTF8: %v, %+v", err, utf8.Messages())
	}
	plain := smtptest.Start(t, smtptest.Options{})
	_, err := relay(t, plain).Send(context.Background(), m)
	var e *smtpmail.Error
	if !errors.As(err, &e) || e.Temporary || !strings.Contains(e.Reply, "SMTPUTF8") || len(plain.Messages()) != 0 {
		t.Errorf("without SMTPUTF8: %#v, %d messages", err, len(plain.Messages()))
	}
}

func TestParseURL(t *testing.T) {
	r, err := smtpmail.ParseURL("smtp://user%40x:p%3Aw@relay.example")
	if err != nil || r.Addr != "relay.example:587" || r.User != "user@x" || r.Password != "p:w" || r.Host != "relay.example" {
		t.Errorf("ParseURL = %+v, %v", r, err)
	}
	if r, err := smtpmail.ParseURL("smtp://relay:2525"); err != nil || r.User != "" || r.Addr != "relay:2525" {
		t.Errorf("no user: %+v, %v", r, err)
	}
	for _, bad := range []string{"smtps://relay", "http://relay", "smtp://", "smtp://:pw@relay", "smtp://relay/path", "smtp://relay?x=1", "::"} {
		if _, err := smtpmail.ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("ParseURL(%q) shows the password: %v", bad, err)
		}
	}
}

// BenchmarkSend: one message with a 30 kB attachment to a relay on
// loopback, a connection each (EHLO, STARTTLS, AUTH PLAIN, MAIL, RCPT,
// DATA), as each delivery attempt does; "build" is the MIME message alone.
//
//	go test ./internal/smtpmail -run '^$' -bench . -benchtime 200x
func BenchmarkSend(b *testing.B) {
	srv := smtptest.Start(b, smtptest.Options{User: "u", Pass: "p"})
	r, err := smtpmail.ParseURL(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	r.TLS = srv.Client
	m := message(scripts[1].name, scripts[1].subject, scripts[1].file, bytes.Repeat([]byte("<cbc:Note>ä</cbc:Note>\n"), 1300))
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.Bytes(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("send", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.Send(context.Background(), m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
