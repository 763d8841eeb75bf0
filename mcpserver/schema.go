package mcpserver

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
)

// A tool's input and output schemas are JSON Schemas inferred from its Go
// types, as the MCP SDK's typed tools infer them: a struct is an object of
// its exported fields named by their json tags, a field without omitempty
// is required, no other property is allowed, and the jsonschema tag is the
// field's description. Inputs are checked against their schema before the
// handler runs, so an argument the tool does not declare (a role, a
// credential, a state directory) is refused, not ignored.

// schema is the part of JSON Schema the tools use.
type schema struct {
	Type        any                `json:"type,omitempty"` // a name, or [null, name]
	Description string             `json:"description,omitempty"`
	Properties  map[string]*schema `json:"properties,omitempty"`
	Required    []string           `json:"required,omitempty"`
	// Additional is false (no other property), or the schema of a map's
	// values; nil: anything.
	Additional any     `json:"additionalProperties,omitempty"`
	Items      *schema `json:"items,omitempty"`
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
)

// schemaFor infers the schema of t; seen holds the struct types being
// inferred (a recursive type's inner occurrences accept anything).
func schemaFor(t reflect.Type, seen map[reflect.Type]bool) *schema {
	switch {
	case t == timeType:
		return &schema{Type: "string"}
	case t == rawType || t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		return &schema{} // its own JSON: anything
	case t.Implements(textType) || reflect.PointerTo(t).Implements(textType):
		return &schema{Type: "string"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(schemaFor(t.Elem(), seen))
	case reflect.String:
		return &schema{Type: "string"}
	case reflect.Bool:
		return &schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &schema{Type: "integer"}
	case reflect.Float32, reflect.Float64:
		return &schema{Type: "number"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nullable(&schema{Type: "string"}) // base64, as encoding/json writes it
		}
		return nullable(&schema{Type: "array", Items: schemaFor(t.Elem(), seen)})
	case reflect.Array:
		return &schema{Type: "array", Items: schemaFor(t.Elem(), seen)}
	case reflect.Map:
		return nullable(&schema{Type: "object", Additional: schemaFor(t.Elem(), seen)})
	case reflect.Struct:
		if seen[t] {
			return &schema{}
		}
		seen[t] = true
		defer delete(seen, t)
		s := &schema{Type: "object", Properties: map[string]*schema{}, Additional: false}
		addFields(s, t, seen)
		return s
	}
	return &schema{} // an interface: anything
}

// nullable lets s be null too (a nil pointer, slice or map).
func nullable(s *schema) *schema {
	if name, ok := s.Type.(string); ok {
		s.Type = []string{"null", name}
	}
	return s
}

// addFields adds t's fields to s, those of embedded structs as its own.
func addFields(s *schema, t reflect.Type, seen map[reflect.Type]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			addFields(s, f.Type, seen)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := schemaFor(f.Type, seen)
		p.Description = f.Tag.Get("jsonschema")
		s.Properties[name] = p
		if !slices.Contains(strings.Split(opts, ","), "omitempty") && !slices.Contains(strings.Split(opts, ","), "omitzero") {
			s.Required = append(s.Required, name)
		}
	}
	sort.Strings(s.Required)
}

// check says what is wrong with v (a decoded JSON value) against s, at
// path; nil when nothing is.
func (s *schema) check(v any, path string) error {
	if !s.typeAccepts(v) {
		return fmt.Errorf("%s: got %s, want %s", path, jsonType(v), typeNames(s.Type))
	}
	switch v := v.(type) {
	case map[string]any:
		return s.checkObject(v, path)
	case []any:
		if s.Items == nil {
			return nil
		}
		for i, e := range v {
			if err := s.Items.check(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *schema) checkObject(v map[string]any, path string) error {
	for _, name := range s.Required {
		if _, ok := v[name]; !ok {
			return fmt.Errorf("%s: missing property %q", path, name)
		}
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := s.Properties[k]
		if p == nil {
			switch a := s.Additional.(type) {
			case bool:
				if !a {
					return fmt.Errorf("%s: unexpected property %q", path, k)
				}
				continue
			case *schema:
				p = a
			default:
				continue
			}
		}
		if err := p.check(v[k], path+"."+k); err != nil {
			return err
		}
	}
	return nil
}

// typeAccepts says whether v is of one of s's types (any, without one).
func (s *schema) typeAccepts(v any) bool {
	switch t := s.Type.(type) {
	case string:
		return isType(v, t)
	case []string:
		return slices.ContainsFunc(t, func(name string) bool { return isType(v, name) })
	}
	return true
}

func isType(v any, name string) bool {
	switch name {
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "number":
		_, ok := v.(float64)
		return ok
	}
	return jsonType(v) == name
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

func typeNames(t any) string {
	if names, ok := t.([]string); ok {
		return strings.Join(names, " or ")
	}
	return fmt.Sprint(t)
}
