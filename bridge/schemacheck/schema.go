// Package schemacheck validates JSON documents against the small part of
// JSON Schema (draft-07) that baton's bridge schemas use: type, properties,
// required, additionalProperties, items, enum, const, format (date-time and
// uuid), minLength, maxLength, minimum, maximum and pattern. Annotations
// (title, description, default, examples, $schema, $id, $comment) are
// ignored; any other keyword is refused when the schema is compiled, so a
// schema cannot silently rely on a keyword this validator does not check.
//
// It exists so a program that links the bridge pays nothing at start-up: a
// general validator compiles every draft's metaschema, and this one compiles
// only the schemas it is given, when it is given them. Its verdicts are
// checked against a general validator by the bridge's differential tests.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/baton-cli/baton/internal/lazy"
)

// Schema is one compiled schema or subschema.
type Schema struct {
	always     *bool // a boolean schema: true accepts everything, false nothing
	types      []string
	properties map[string]*Schema
	required   []string
	noExtra    bool    // additionalProperties: false
	extra      *Schema // additionalProperties as a schema
	items      *Schema
	enum       []any
	konst      *any
	format     string
	minLength  *int
	maxLength  *int
	minimum    *big.Rat
	maximum    *big.Rat
	pattern    *regexp.Regexp
}

// typeOrder is the order types are named in, whatever the schema's order.
var typeOrder = []string{"null", "boolean", "number", "integer", "string", "array", "object"}

// annotations are keywords that say something about a schema to a reader
// but nothing about which documents are valid.
var annotations = lazy.Value[map[string]bool]{Build: func() map[string]bool {
	return map[string]bool{
		"$schema": true, "$id": true, "$comment": true, "title": true,
		"description": true, "default": true, "examples": true,
	}
}}

// formats are the formats checked; any other is refused at compile time.
var formats = lazy.Value[map[string]func(string) bool]{Build: func() map[string]func(string) bool {
	return map[string]func(string) bool{
		"date-time": isDateTime,
		"uuid":      isUUID,
	}
}}

// Compile parses a schema document. Its errors name the keyword and where
// in the schema it is.
func Compile(raw []byte) (*Schema, error) {
	doc, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	return compile(doc, "#")
}

// Decode reads exactly one JSON value, numbers as json.Number.
func Decode(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

func compile(v any, at string) (*Schema, error) {
	if b, ok := v.(bool); ok {
		return &Schema{always: &b}, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a schema must be an object or a boolean", at)
	}
	s := &Schema{}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if annotations.Get()[k] {
			continue
		}
		kw, ok := compileKeyword(k)
		if !ok {
			return nil, fmt.Errorf("%s: keyword %q is not supported by baton's schema validator", at, k)
		}
		if err := kw(s, obj[k], at+"/"+k); err != nil {
			return nil, err
		}
	}
	return s, nil
}

type keyword func(s *Schema, v any, at string) error

// keywords are the keywords a schema may use and how each compiles, built
// on first use (compileKeyword): a process that checks no bridge file does
// not build them at start.
var (
	keywords     map[string]keyword
	keywordsOnce sync.Once
)

// compileKeyword is how keyword k compiles.
func compileKeyword(k string) (keyword, bool) {
	keywordsOnce.Do(initKeywords)
	kw, ok := keywords[k]
	return kw, ok
}

func initKeywords() {
	keywords = map[string]keyword{
		"type":                 compileType,
		"properties":           compileProperties,
		"required":             compileRequired,
		"additionalProperties": compileAdditional,
		"items":                compileItems,
		"enum":                 compileEnum,
		"const":                func(s *Schema, v any, _ string) error { s.konst = &v; return nil },
		"format":               compileFormat,
		"minLength":            func(s *Schema, v any, at string) error { return count(&s.minLength, v, at) },
		"maxLength":            func(s *Schema, v any, at string) error { return count(&s.maxLength, v, at) },
		"minimum":              func(s *Schema, v any, at string) error { return bound(&s.minimum, v, at) },
		"maximum":              func(s *Schema, v any, at string) error { return bound(&s.maximum, v, at) },
		"pattern":              compilePattern,
	}
}

func compileType(s *Schema, v any, at string) error {
	var names []string
	switch v := v.(type) {
	case string:
		names = []string{v}
	case []any:
		for _, n := range v {
			str, ok := n.(string)
			if !ok {
				return fmt.Errorf("%s: type names must be strings", at)
			}
			names = append(names, str)
		}
	default:
		return fmt.Errorf("%s: must be a type name or an array of them", at)
	}
	for _, n := range names {
		if !slices.Contains(typeOrder, n) {
			return fmt.Errorf("%s: unknown type %q", at, n)
		}
	}
	for _, t := range typeOrder {
		if slices.Contains(names, t) {
			s.types = append(s.types, t)
		}
	}
	return nil
}

func compileProperties(s *Schema, v any, at string) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: must be an object", at)
	}
	s.properties = make(map[string]*Schema, len(obj))
	for name, sub := range obj {
		c, err := compile(sub, at+"/"+name)
		if err != nil {
			return err
		}
		s.properties[name] = c
	}
	return nil
}

func compileRequired(s *Schema, v any, at string) error {
	arr, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s: must be an array of names", at)
	}
	for _, n := range arr {
		str, ok := n.(string)
		if !ok {
			return fmt.Errorf("%s: must be an array of names", at)
		}
		s.required = append(s.required, str)
	}
	return nil
}

func compileAdditional(s *Schema, v any, at string) error {
	if b, ok := v.(bool); ok {
		s.noExtra = !b
		return nil
	}
	c, err := compile(v, at)
	s.extra = c
	return err
}

func compileItems(s *Schema, v any, at string) error {
	if _, ok := v.([]any); ok {
		return fmt.Errorf("%s: only a single items schema is supported", at)
	}
	c, err := compile(v, at)
	s.items = c
	return err
}

func compileEnum(s *Schema, v any, at string) error {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return fmt.Errorf("%s: must be a non-empty array", at)
	}
	s.enum = arr
	return nil
}

func compileFormat(s *Schema, v any, at string) error {
	name, ok := v.(string)
	if !ok || formats.Get()[name] == nil {
		return fmt.Errorf("%s: format %v is not supported by baton's schema validator (only date-time and uuid)", at, v)
	}
	s.format = name
	return nil
}

func compilePattern(s *Schema, v any, at string) error {
	str, ok := v.(string)
	if !ok {
		return fmt.Errorf("%s: must be a string", at)
	}
	re, err := regexp.Compile(str)
	if err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	s.pattern = re
	return nil
}

func count(dst **int, v any, at string) error {
	r, ok := rat(v)
	if !ok || !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() {
		return fmt.Errorf("%s: must be a non-negative integer", at)
	}
	n := int(r.Num().Int64())
	*dst = &n
	return nil
}

func bound(dst **big.Rat, v any, at string) error {
	r, ok := rat(v)
	if !ok {
		return fmt.Errorf("%s: must be a number", at)
	}
	*dst = r
	return nil
}

// rat is the exact value of a JSON number; false for anything else, and
// for numbers too large to hold.
func rat(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	return new(big.Rat).SetString(string(n))
}

// typeOf names the JSON type of a decoded value ("number" for every number).
func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "invalid"
}

// quote renders s single-quoted, for messages.
func quote(s string) string {
	q := fmt.Sprintf("%q", s)
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, `'`, `\'`)
	return "'" + q[1:len(q)-1] + "'"
}
