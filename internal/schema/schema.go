package schema

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/farebox/farebox/internal/apperr"
)

// Schema is a compiled schema, safe for concurrent use.
type Schema struct {
	s    *jsonschema.Schema
	hash [32]byte
}

// Problem is one validation failure: where in the instance (a JSON pointer,
// "" for the instance itself) and what is wrong, as a phrase that reads after
// the pointer ("must be a date (YYYY-MM-DD)").
type Problem struct {
	Pointer string
	Message string
}

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not allowed: %s", url)
}

// Compile compiles a draft-04 schema (the default draft; a $schema keyword
// may name another) with format assertions on. A broken schema is an
// apperr.Invalid error with code invalid_schema.
func Compile(schemaJSON []byte) (*Schema, error) {
	const op = "schema.Compile"
	hash := sha256.Sum256(schemaJSON)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, apperr.E(op, apperr.Invalid, CodeInvalidSchema, "schema is not valid JSON").WithCause(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	url := "mem://farebox/schema/" + hex.EncodeToString(hash[:]) + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, apperr.E(op, apperr.Invalid, CodeInvalidSchema, "schema cannot be added").WithCause(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, apperr.E(op, apperr.Invalid, CodeInvalidSchema, "schema does not compile: "+err.Error()).WithCause(err)
	}
	return &Schema{s: s, hash: hash}, nil
}

// Hash is the SHA-256 of the schema's bytes (the cache key).
func (s *Schema) Hash() [32]byte { return s.hash }

// Decode parses JSON the way Validate expects it: numbers as json.Number,
// exactly one value.
func Decode(data []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// Validate checks an instance decoded by Decode (or built from map[string]any,
// []any, string, bool, nil and json.Number) and returns its problems sorted by
// pointer, or nil when it conforms.
func (s *Schema) Validate(instance any) []Problem {
	err := s.s.Validate(instance)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Message: "cannot be validated: " + err.Error()}}
	}
	ps := flatten(ve)
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Pointer != ps[j].Pointer {
			return ps[i].Pointer < ps[j].Pointer
		}
		return ps[i].Message < ps[j].Message
	})
	out := ps[:0]
	for i, p := range ps {
		if i == 0 || p != ps[i-1] {
			out = append(out, p)
		}
	}
	return out
}

// ValidateJSON decodes data and validates it; malformed JSON is an error.
func (s *Schema) ValidateJSON(data []byte) ([]Problem, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, err
	}
	return s.Validate(v), nil
}

var printer = message.NewPrinter(language.English)

// flatten turns the error tree into leaf problems. For oneOf/anyOf failures it
// keeps the alternative that got furthest into the instance (its deepest
// pointer), so a photo_id_lite payload is not also blamed for missing photo_id.
func flatten(e *jsonschema.ValidationError) []Problem {
	if len(e.Causes) == 0 {
		return leaf(e)
	}
	switch e.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		var best []Problem
		bestDepth := -1
		for _, c := range e.Causes {
			ps := flatten(c)
			if d := depth(ps); d > bestDepth {
				best, bestDepth = ps, d
			}
		}
		return best
	}
	var ps []Problem
	for _, c := range e.Causes {
		ps = append(ps, flatten(c)...)
	}
	return ps
}

func depth(ps []Problem) int {
	d := 0
	for _, p := range ps {
		if n := strings.Count(p.Pointer, "/"); n > d {
			d = n
		}
	}
	return d
}

func leaf(e *jsonschema.ValidationError) []Problem {
	at := pointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		ps := make([]Problem, 0, len(k.Missing))
		for _, m := range k.Missing {
			ps = append(ps, Problem{at + "/" + apperr.EscapeToken(m), "is required"})
		}
		return ps
	case *kind.AdditionalProperties:
		ps := make([]Problem, 0, len(k.Properties))
		for _, p := range k.Properties {
			ps = append(ps, Problem{at + "/" + apperr.EscapeToken(p), "is not allowed"})
		}
		return ps
	case *kind.Type:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = article(w)
		}
		return []Problem{{at, "must be " + strings.Join(want, " or ")}}
	case *kind.Format:
		return []Problem{{at, formatText(k.Want)}}
	case *kind.Pattern:
		return []Problem{{at, "must match the pattern " + k.Want}}
	case *kind.MinLength:
		if k.Want == 1 {
			return []Problem{{at, "must not be empty"}}
		}
		return []Problem{{at, fmt.Sprintf("must be at least %d characters long", k.Want)}}
	case *kind.MaxLength:
		return []Problem{{at, fmt.Sprintf("must be at most %d characters long", k.Want)}}
	case *kind.Minimum:
		return []Problem{{at, "must be at least " + k.Want.RatString()}}
	case *kind.Maximum:
		return []Problem{{at, "must be at most " + k.Want.RatString()}}
	case *kind.ExclusiveMinimum:
		return []Problem{{at, "must be greater than " + k.Want.RatString()}}
	case *kind.ExclusiveMaximum:
		return []Problem{{at, "must be less than " + k.Want.RatString()}}
	case *kind.MultipleOf:
		return []Problem{{at, "must be a multiple of " + k.Want.RatString()}}
	case *kind.FalseSchema:
		return []Problem{{at, "is not allowed"}}
	case *kind.OneOf:
		return []Problem{{at, "must match exactly one of the allowed forms"}}
	case *kind.Not:
		return []Problem{{at, "must not match the excluded form"}}
	default:
		return []Problem{{at, strings.TrimPrefix(e.ErrorKind.LocalizedString(printer), "value ")}}
	}
}

func article(t string) string {
	switch t {
	case "object", "array", "integer":
		return "an " + t
	case "null":
		return "null"
	default:
		return "a " + t
	}
}

func formatText(f string) string {
	switch f {
	case "date":
		return "must be a date (YYYY-MM-DD)"
	case "date-time":
		return "must be a date and time (RFC 3339)"
	case "email":
		return "must be an e-mail address"
	default:
		return "must be a valid " + f
	}
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(apperr.EscapeToken(t))
	}
	return b.String()
}

// Cache compiles each distinct schema once; it is safe for concurrent use and
// its zero value is ready.
type Cache struct {
	mu       sync.Mutex
	m        map[[32]byte]*entry
	compiles int // number of Compile calls made, for tests
}

type entry struct {
	once sync.Once
	s    *Schema
	err  error
}

// Get returns the compiled schema for schemaJSON, compiling it on first use.
// Concurrent callers with the same schema wait for one compilation; a schema
// that fails keeps failing with the same error.
func (c *Cache) Get(schemaJSON []byte) (*Schema, error) {
	key := sha256.Sum256(schemaJSON)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[[32]byte]*entry{}
	}
	e := c.m[key]
	if e == nil {
		e = &entry{}
		c.m[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		c.mu.Lock()
		c.compiles++
		c.mu.Unlock()
		e.s, e.err = Compile(schemaJSON)
	})
	return e.s, e.err
}

// Len is the number of distinct schemas seen.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
