package xrechnung

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
)

// checkWellFormed parses doc and rejects empty elements except those named
// in allowEmpty (local names).
func checkWellFormed(doc []byte, allowEmpty ...string) error {
	dec := xml.NewDecoder(bytes.NewReader(doc))
	type frame struct {
		name    string
		content bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) > 0 {
				stack[len(stack)-1].content = true
			}
			stack = append(stack, frame{name: t.Name.Local})
		case xml.CharData:
			if len(stack) > 0 && strings.TrimSpace(string(t)) != "" {
				stack[len(stack)-1].content = true
			}
		case xml.EndElement:
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if !f.content && !slices.Contains(allowEmpty, f.name) {
				return fmt.Errorf("%w: %s", errEmptyElement, f.name)
			}
		}
	}
	return nil
}
