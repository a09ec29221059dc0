// Package smtpmail sends e-mail through an SMTP submission relay
// (RFC 6409): the relay's address and credentials from an smtp:// URL,
// STARTTLS whenever the relay offers it and always before credentials
// (AUTH is never sent in clear), and the message built here as MIME
// (RFC 2045–2049) with non-ASCII names and subjects as RFC 2047 encoded
// words and attachment filenames as RFC 2231 parameters.
// docs/invoicing.md, "Delivery to the buyer".
package smtpmail

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"
)

// Message is one e-mail: a plain text body and attachments.
type Message struct {
	From, To    mail.Address
	Subject     string
	Date        time.Time
	MessageID   string // without angle brackets: "<local>@<domain>"
	Text        string // the body, UTF-8, lines separated by "\n"
	Attachments []Attachment
}

// Attachment is a file attached to a message.
type Attachment struct {
	Name        string // the filename the recipient sees (any UTF-8)
	ContentType string
	Body        []byte
}

// maxLine is where header lines are folded (RFC 5322 2.1.1 recommends 78).
const maxLine = 76

// Bytes is the message as sent: CRLF line ends, headers folded, a
// multipart/mixed body with the text (quoted-printable) and each
// attachment (base64).
func (m Message) Bytes() ([]byte, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	text := textproto.MIMEHeader{}
	text.Set("Content-Type", "text/plain; charset=utf-8")
	text.Set("Content-Transfer-Encoding", "quoted-printable")
	pw, err := mw.CreatePart(text)
	if err != nil {
		return nil, err
	}
	qp := quotedprintable.NewWriter(pw)
	if _, err := qp.Write([]byte(strings.ReplaceAll(m.Text, "\n", "\r\n"))); err != nil {
		return nil, err
	}
	if err := qp.Close(); err != nil {
		return nil, err
	}
	for _, a := range m.Attachments {
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", mime.FormatMediaType(a.ContentType, map[string]string{"name": a.Name}))
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": a.Name}))
		h.Set("Content-Transfer-Encoding", "base64")
		w, err := mw.CreatePart(h)
		if err != nil {
			return nil, err
		}
		if err := writeBase64(w, a.Body); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, h := range [][2]string{
		{"From", m.From.String()},
		{"To", m.To.String()},
		{"Subject", mime.QEncoding.Encode("utf-8", m.Subject)},
		{"Date", m.Date.Format(time.RFC1123Z)},
		{"Message-ID", "<" + m.MessageID + ">"},
		{"MIME-Version", "1.0"},
		{"Content-Type", mime.FormatMediaType("multipart/mixed", map[string]string{"boundary": mw.Boundary()})},
	} {
		out.WriteString(fold(h[0] + ": " + h[1]))
	}
	out.WriteString("\r\n")
	out.Write(body.Bytes())
	return out.Bytes(), nil
}

// fold writes a header line, broken before a space wherever it would
// pass maxLine (an encoded word is never longer than 75 characters, so
// encoded names and subjects always fold), ended by CRLF.
func fold(line string) string {
	var b strings.Builder
	for len(line) > maxLine {
		i := strings.LastIndexByte(line[:maxLine], ' ')
		if i <= 0 {
			if i = strings.IndexByte(line[maxLine:], ' '); i < 0 {
				break
			}
			i += maxLine
		}
		b.WriteString(line[:i])
		b.WriteString("\r\n")
		line = line[i:] // the space starts the continuation line
	}
	b.WriteString(line)
	b.WriteString("\r\n")
	return b.String()
}

// writeBase64 writes body in base64 lines of 76 characters.
func writeBase64(w interface{ Write([]byte) (int, error) }, body []byte) error {
	enc := base64.StdEncoding.EncodeToString(body)
	for len(enc) > 0 {
		n := min(len(enc), 76)
		if _, err := fmt.Fprintf(w, "%s\r\n", enc[:n]); err != nil {
			return err
		}
		enc = enc[n:]
	}
	return nil
}
