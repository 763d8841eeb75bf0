package schemacheck

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrorKind says which keyword a document broke.
type ErrorKind int

// The kinds of error, one per keyword.
const (
	KindFalse ErrorKind = iota // the schema is false
	KindType
	KindConst
	KindEnum
	KindFormat
	KindRequired
	KindAdditionalProperties
	KindMinLength
	KindMaxLength
	KindPattern
	KindMinimum
	KindMaximum
)

// Error is one place where a document breaks its schema.
type Error struct {
	// Location is the path from the document's root to the value: member
	// names and array indexes.
	Location []string
	Kind     ErrorKind
	// Names: the missing members (KindRequired, in the schema's order) or
	// the members not allowed (KindAdditionalProperties, sorted).
	Names []string
	// Got is the value's type name (KindType: "number" for any number) or
	// the value itself (KindConst, KindEnum, KindFormat, KindPattern), its
	// length (KindMinLength, KindMaxLength) or its number (KindMinimum,
	// KindMaximum, a *big.Rat).
	Got any
	// Want: the allowed type names (KindType, in a fixed order), the allowed
	// values (KindEnum, KindConst), the format's name (KindFormat), the
	// pattern (KindPattern), the length limit (an int) or the bound (a
	// *big.Rat).
	Want any
}

// Error describes the error without its location.
func (e *Error) Error() string {
	switch e.Kind {
	case KindFalse:
		return "false schema"
	case KindType:
		return fmt.Sprintf("got %s, want %s", e.Got, strings.Join(e.Want.([]string), " or "))
	case KindConst:
		return "value must be " + display(e.Want)
	case KindEnum:
		var want []string
		for _, v := range e.Want.([]any) {
			want = append(want, display(v))
		}
		return "value must be one of " + strings.Join(want, ", ")
	case KindFormat:
		return fmt.Sprintf("%s is not valid %s", display(e.Got), e.Want)
	case KindRequired:
		return "missing properties " + joinQuoted(e.Names)
	case KindAdditionalProperties:
		return "additional properties " + joinQuoted(e.Names) + " not allowed"
	case KindMinLength:
		return fmt.Sprintf("minLength: got %d, want %d", e.Got, e.Want)
	case KindMaxLength:
		return fmt.Sprintf("maxLength: got %d, want %d", e.Got, e.Want)
	case KindPattern:
		return fmt.Sprintf("%s does not match pattern %s", quote(e.Got.(string)), quote(e.Want.(string)))
	case KindMinimum:
		return fmt.Sprintf("minimum: got %v, want %v", float(e.Got), float(e.Want))
	case KindMaximum:
		return fmt.Sprintf("maximum: got %v, want %v", float(e.Got), float(e.Want))
	}
	return "invalid"
}

// Validate checks a document decoded by Decode and returns every error
// found, nil when it is valid. A value of the wrong type, or not in the
// enum or const, or not in its format, gets only that error; otherwise
// every keyword is checked, object members in name order.
func (s *Schema) Validate(doc any) []*Error {
	var out []*Error
	s.validate(doc, nil, &out)
	return out
}

func (s *Schema) validate(v any, at []string, out *[]*Error) {
	fail := func(e *Error) {
		e.Location = slices.Clone(at)
		*out = append(*out, e)
	}
	if s.always != nil {
		if !*s.always {
			fail(&Error{Kind: KindFalse})
		}
		return
	}
	if e := s.checkValue(v); e != nil {
		fail(e)
		return
	}
	switch v := v.(type) {
	case map[string]any:
		s.validateObject(v, at, fail, out)
	case []any:
		if s.items != nil {
			for i, item := range v {
				s.items.validate(item, append(at, strconv.Itoa(i)), out)
			}
		}
	case string:
		s.validateString(v, fail)
	case json.Number:
		s.validateNumber(v, fail)
	}
}

// checkValue checks the keywords whose failure ends the value's checks:
// type, const, enum and format.
func (s *Schema) checkValue(v any) *Error {
	t := typeOf(v)
	if s.types != nil && !slices.Contains(s.types, t) && !(t == "number" && slices.Contains(s.types, "integer") && isInteger(v)) {
		return &Error{Kind: KindType, Got: t, Want: s.types}
	}
	if s.konst != nil && !equal(v, *s.konst) {
		return &Error{Kind: KindConst, Got: v, Want: *s.konst}
	}
	if s.enum != nil && !slices.ContainsFunc(s.enum, func(w any) bool { return equal(v, w) }) {
		return &Error{Kind: KindEnum, Got: v, Want: s.enum}
	}
	if str, ok := v.(string); ok && s.format != "" && !formats.Get()[s.format](str) {
		return &Error{Kind: KindFormat, Got: v, Want: s.format}
	}
	return nil
}

func (s *Schema) validateObject(obj map[string]any, at []string, fail func(*Error), out *[]*Error) {
	var missing []string
	for _, name := range s.required {
		if _, ok := obj[name]; !ok {
			missing = append(missing, name)
		}
	}
	if missing != nil {
		fail(&Error{Kind: KindRequired, Names: missing})
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	sort.Strings(names)
	var extra []string
	for _, name := range names {
		if sub, ok := s.properties[name]; ok {
			sub.validate(obj[name], append(at, name), out)
		} else if s.extra != nil {
			s.extra.validate(obj[name], append(at, name), out)
		} else if s.noExtra {
			extra = append(extra, name)
		}
	}
	if extra != nil {
		fail(&Error{Kind: KindAdditionalProperties, Names: extra})
	}
}

func (s *Schema) validateString(str string, fail func(*Error)) {
	n := utf8.RuneCountInString(str)
	if s.minLength != nil && n < *s.minLength {
		fail(&Error{Kind: KindMinLength, Got: n, Want: *s.minLength})
	}
	if s.maxLength != nil && n > *s.maxLength {
		fail(&Error{Kind: KindMaxLength, Got: n, Want: *s.maxLength})
	}
	if s.pattern != nil && !s.pattern.MatchString(str) {
		fail(&Error{Kind: KindPattern, Got: str, Want: s.pattern.String()})
	}
}

func (s *Schema) validateNumber(num json.Number, fail func(*Error)) {
	if s.minimum == nil && s.maximum == nil {
		return
	}
	r, ok := rat(num)
	if !ok {
		// Beyond what can be held exactly: judged by its sign and size.
		r = huge(num)
	}
	if s.minimum != nil && r.Cmp(s.minimum) < 0 {
		fail(&Error{Kind: KindMinimum, Got: r, Want: s.minimum})
	}
	if s.maximum != nil && r.Cmp(s.maximum) > 0 {
		fail(&Error{Kind: KindMaximum, Got: r, Want: s.maximum})
	}
}

// huge stands in for a number whose exponent is too large to hold exactly:
// a very large number of its sign, or zero when the exponent is negative.
func huge(num json.Number) *big.Rat {
	s := string(num)
	if i := strings.IndexAny(s, "eE"); i >= 0 && strings.HasPrefix(s[i+1:], "-") {
		return new(big.Rat)
	}
	r := new(big.Rat).SetFrac(new(big.Int).Lsh(big.NewInt(1), 4096), big.NewInt(1))
	if strings.HasPrefix(s, "-") {
		r.Neg(r)
	}
	return r
}

func isInteger(v any) bool {
	r, ok := rat(v)
	return ok && r.IsInt()
}

// equal is JSON equality: numbers by value, objects by members.
func equal(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		ra, ok1 := rat(a)
		rb, ok2 := rat(b)
		return ok1 && ok2 && ra.Cmp(rb) == 0
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, equal)
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !equal(va, vb) {
				return false
			}
		}
		return true
	}
	return a == b
}

func display(v any) string {
	if s, ok := v.(string); ok {
		return quote(s)
	}
	return fmt.Sprint(v)
}

func joinQuoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}

func float(v any) float64 {
	f, _ := v.(*big.Rat).Float64()
	return f
}
