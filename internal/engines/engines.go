package engines

import (
	"bytes"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

// Names of the engines, equal to their path segment.
const (
	RenderingEngineName    = "rendering_engine"
	IdentificationViewName = "identification_view"
)

// Current versions. Bump on every content change (see versions.txt).
const (
	RenderingEngineVersion    = "1.3.0"
	IdentificationViewVersion = "1.0.1"
)

// ContentType of an engine response.
const ContentType = "text/html; charset=utf-8"

//go:embed assets/rendering_engine.html
var renderingHTML []byte

//go:embed assets/identification_view.html
var identificationHTML []byte

// aztecJS is the rendering engine's Aztec encoder, inlined at {{AZTEC_JS}}
// (a file of its own so that node tests it alone: TestAztecEncoderJS).
//
//go:embed assets/aztec.js
var aztecJS []byte

// Engine is one embedded engine document.
type Engine struct {
	Name    string // RenderingEngineName or IdentificationViewName
	Version string // "major.minor.patch"
	HTML    []byte // the complete document; do not modify
}

var all = []Engine{
	build(RenderingEngineName, RenderingEngineVersion, renderingHTML),
	build(IdentificationViewName, IdentificationViewVersion, identificationHTML),
}

func build(name, version string, tmpl []byte) Engine {
	if _, _, _, err := parseVersion(version); err != nil {
		panic("engines: " + name + ": " + err.Error())
	}
	html := bytes.ReplaceAll(tmpl, []byte("{{VERSION}}"), []byte(version))
	html = bytes.ReplaceAll(html, []byte("{{AZTEC_JS}}"), bytes.TrimSpace(aztecJS))
	return Engine{Name: name, Version: version, HTML: html}
}

// RenderingEngine returns the rendering engine.
func RenderingEngine() Engine { return all[0] }

// ByName returns the current engine called name.
func ByName(name string) (Engine, bool) {
	for _, e := range all {
		if e.Name == name {
			return e, true
		}
	}
	return Engine{}, false
}

// Major is the first version segment: the "1" of …/rendering_engine/1.
func (e Engine) Major() int { m, _, _, _ := parseVersion(e.Version); return m }

// Path is the version as path segments: "1/0/0".
func (e Engine) Path() string { return strings.ReplaceAll(e.Version, ".", "/") }

// Location is the redirect target for a request under versionPrefix
// ("/v9"): "/v9/ticketing/rendering_engine/1/0/0?inline=inline".
func (e Engine) Location(versionPrefix string) string {
	return strings.TrimRight(versionPrefix, "/") + "/ticketing/" + e.Name + "/" + e.Path() + "?inline=inline"
}

// Resolve maps the path segments after /ticketing/<name>/ to a response:
// ["1"] (the major the SDKs ask for) gives redirect=true with the current
// engine; ["1","0","0"] equal to the current version gives the document.
// Any other major or version is not found (ok=false): old versions are not
// kept, and a client asking for one is redirected by asking for the major.
func Resolve(name string, segments []string) (e Engine, redirect, ok bool) {
	e, found := ByName(name)
	if !found {
		return Engine{}, false, false
	}
	switch len(segments) {
	case 1:
		return e, true, segments[0] == strconv.Itoa(e.Major())
	case 3:
		return e, false, strings.Join(segments, ".") == e.Version
	}
	return Engine{}, false, false
}

func parseVersion(v string) (major, minor, patch int, err error) {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return 0, 0, 0, fmt.Errorf("version %q needs three segments", v)
	}
	var n [3]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 || strconv.Itoa(x) != p {
			return 0, 0, 0, fmt.Errorf("version %q: segment %q is not a number", v, p)
		}
		n[i] = x
	}
	return n[0], n[1], n[2], nil
}
