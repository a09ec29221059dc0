package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
)

// boxesandglue v0.2.14 writes the XMP packet wrapper wrongly: the begin
// attribute holds U+FEFF encoded twice (C3 AF C2 BB C2 BF, "ï»¿") and the
// closing <?xpacket end="w"?> is missing, so PDF/A validators reject the
// metadata. fixXMP rewrites the packet in the finished file: the correct
// byte-order mark (EF BB BF), the trailer after </x:xmpmeta>, the stream's
// /Length, and every cross-reference offset behind it (the file has one
// classic xref table, no object streams). TestXMPPacket guards it; a
// library that writes something else makes Render fail rather than produce
// a file it cannot vouch for.

var (
	xmpBadBegin  = []byte("<?xpacket begin=\"\u00ef\u00bb\u00bf\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>")
	xmpGoodBegin = []byte("<?xpacket begin=\"\uFEFF\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>")
	xmpMetaEnd   = []byte("</x:xmpmeta>")
	xmpTrailer   = []byte("\n<?xpacket end=\"w\"?>")
	lengthRE     = regexp.MustCompile(`/Length (\d+)`)
	// liSpace matches the indentation the library writes inside an
	// rdf:li value ("\nRechnung 2026-000001          "), which made the
	// XMP title and author differ from the Info dictionary's.
	liSpace = regexp.MustCompile(`(<rdf:li[^>]*>)\s*([^<]*?)\s*(</rdf:li>)`)
)

var errXMPLayout = errors.New("pdf: unexpected XMP packet or xref layout (boxesandglue version changed?); see xmp.go")

func fixXMP(pdf []byte) ([]byte, error) {
	start := bytes.Index(pdf, xmpBadBegin)
	if start < 0 || bytes.Contains(pdf, []byte("<?xpacket end=")) {
		return nil, errXMPLayout
	}
	end := bytes.Index(pdf[start:], xmpMetaEnd)
	if end < 0 {
		return nil, errXMPLayout
	}
	end += start + len(xmpMetaEnd)
	objStart := bytes.LastIndex(pdf[:start], []byte(" obj"))
	if objStart < 0 {
		return nil, errXMPLayout
	}
	m := lengthRE.FindSubmatchIndex(pdf[objStart:start])
	if m == nil {
		return nil, errXMPLayout
	}
	oldLen, _ := strconv.Atoi(string(pdf[objStart+m[2] : objStart+m[3]]))
	packet := append(append([]byte{}, xmpGoodBegin...), pdf[start+len(xmpBadBegin):end]...)
	packet = liSpace.ReplaceAll(packet, []byte("$1$2$3"))
	packet = append(packet, xmpTrailer...)
	newLen := oldLen + len(packet) - (end - start)

	out := make([]byte, 0, len(pdf)+64)
	out = append(out, pdf[:objStart+m[2]]...)
	out = strconv.AppendInt(out, int64(newLen), 10)
	out = append(out, pdf[objStart+m[3]:start]...)
	out = append(out, packet...)
	out = append(out, pdf[end:]...)
	delta := len(out) - len(pdf)

	// The cross-reference table: "xref\n0 N\n" and N entries of 20 bytes.
	x := bytes.LastIndex(out, []byte("\nxref\n"))
	if x < 0 {
		return nil, errXMPLayout
	}
	p := x + len("\nxref\n")
	nl := bytes.IndexByte(out[p:], '\n')
	var first, count int
	if nl < 0 {
		return nil, errXMPLayout
	}
	if _, err := fmt.Sscanf(string(out[p:p+nl]), "%d %d", &first, &count); err != nil || first != 0 {
		return nil, errXMPLayout
	}
	p += nl + 1
	for i := range count {
		e := out[p+20*i : p+20*i+20]
		if e[17] != 'n' {
			continue
		}
		off, err := strconv.Atoi(string(e[:10]))
		if err != nil {
			return nil, errXMPLayout
		}
		if off > start {
			copy(e[:10], fmt.Sprintf("%010d", off+delta))
		}
	}
	sx := bytes.LastIndex(out, []byte("startxref\n"))
	if sx < 0 {
		return nil, errXMPLayout
	}
	q := sx + len("startxref\n")
	nl = bytes.IndexByte(out[q:], '\n')
	old, err := strconv.Atoi(string(out[q : q+nl]))
	if nl < 0 || err != nil || old != x+1-delta {
		return nil, errXMPLayout
	}
	return append(out[:q:q], append([]byte(strconv.Itoa(x+1)), out[q+nl:]...)...), nil
}
