package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Problem is one thing wrong with a bridge document, found by the schema
// validator and named in words a host can act on.
type Problem struct {
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// Problem codes. The first four are seed 004's common mistakes.
const (
	ProblemResultField     = "result_instead_of_response"
	ProblemResponseObject  = "response_not_string"
	ProblemMissingField    = "missing_field"
	ProblemDurationString  = "duration_not_number"
	ProblemNotJSON         = "not_json"
	ProblemNotObject       = "not_object"
	ProblemUnknownField    = "unknown_field"
	ProblemWrongType       = "wrong_type"
	ProblemInvalidValue    = "invalid_value"
	ProblemSchemaViolation = "schema"
	ProblemStaleRequest    = "request_id_mismatch"
)

// responseFields are the envelope's fields in seed 004's order, with what
// each must hold.
var responseFields = []struct{ name, want string }{
	{"request_id", "a string: the request_id of .agent-request.json"},
	{"version", `a string: "1.0"`},
	{"status", `a string: "success", "error" or "timeout"`},
	{"response", "the agent's output as a string, or null"},
	{"error_message", "a string, or null on success"},
	{"error_type", "a string, or null on success"},
	{"created_at", "an ISO 8601 time such as 2025-11-24T14:22:45Z"},
	{"duration_seconds", "a number: the seconds the agent took, such as 1.0"},
	{"metadata", "an object, {} when there is nothing to say"},
}

// Diagnose checks data as a document of kind k with the JSON Schema
// validator and returns its problems, the seed's common mistakes named
// first; none means valid.
func Diagnose(k Kind, data []byte) []Problem {
	doc, err := decode(data)
	if err != nil {
		return []Problem{notJSON(k, err)}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return []Problem{{Code: ProblemNotObject, Message: fmt.Sprintf("the file holds a JSON %s, not an object: %s", typeName(doc), wrapHint(k))}}
	}
	if ps := outOfRange(doc, nil); len(ps) > 0 {
		return ps
	}
	found, err := validate(k, doc)
	if err != nil {
		return []Problem{{Code: ProblemSchemaViolation, Message: err.Error()}}
	}
	if len(found) == 0 {
		return decodeProblems(k, data)
	}
	var out []Problem
	for _, e := range found {
		out = append(out, describe(k, obj, e)...)
	}
	return tidy(out)
}

// outOfRange names the numbers under v that no exact arithmetic holds (an
// exponent in the millions), which the validator cannot compare and a
// reader of the file cannot decode.
func outOfRange(v any, at []string) []Problem {
	var out []Problem
	switch v := v.(type) {
	case json.Number:
		if _, ok := new(big.Rat).SetString(string(v)); !ok {
			field := strings.Join(at, ".")
			out = append(out, Problem{Code: ProblemInvalidValue, Field: field, Message: fmt.Sprintf("%q is %s, a number whose exponent is too large to read: write a plain number such as 12.5", field, v)})
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out = append(out, outOfRange(v[k], append(at[:len(at):len(at)], k))...)
		}
	case []any:
		for i, e := range v {
			out = append(out, outOfRange(e, append(at[:len(at):len(at)], strconv.Itoa(i)))...)
		}
	}
	return out
}

// decodeProblems names what keeps a document the schema accepts from
// decoding into the type baton reads it as: a whole number written with a
// fraction (1.0) is an integer to JSON Schema but not to Go.
func decodeProblems(k Kind, data []byte) []Problem {
	var into any
	switch k {
	case KindRequest:
		into = new(Request)
	case KindCheckpoint:
		into = new(Checkpoint)
	default:
		into = new(Response)
	}
	err := json.Unmarshal(data, into)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && strings.HasPrefix(te.Type.Kind().String(), "int"):
		return []Problem{{Code: ProblemWrongType, Field: te.Field, Message: fmt.Sprintf("%q is the %s: write it as a whole number without a fraction or exponent, such as 1", te.Field, te.Value)}}
	case errors.As(err, &te):
		return []Problem{{Code: ProblemWrongType, Field: te.Field, Message: fmt.Sprintf("%q is the %s, which baton reads as %s", te.Field, te.Value, te.Type)}}
	}
	return []Problem{{Code: ProblemSchemaViolation, Message: err.Error()}}
}

func notJSON(k Kind, err error) Problem {
	return Problem{Code: ProblemNotJSON, Message: fmt.Sprintf("not JSON (%v): %s", err, wrapHint(k))}
}

// wrapHint says what a non-object file probably is.
func wrapHint(k Kind) string {
	if k == KindResponse || k == KindResponseRead {
		return "this looks like the agent's raw output; it must be wrapped in the response envelope"
	}
	return "a bridge " + string(k) + " is one JSON object"
}

// describe turns one validator finding into problems.
func describe(k Kind, obj map[string]any, e *jsonschema.ValidationError) []Problem {
	field := strings.Join(e.InstanceLocation, ".")
	response := k == KindResponse || k == KindResponseRead
	switch ek := e.ErrorKind.(type) {
	case *kind.Required:
		return missing(k, field, ek.Missing)
	case *kind.AdditionalProperties:
		return unknown(response && field == "", field, ek.Properties)
	case *kind.Type:
		return []Problem{wrongType(response, field, ek.Got, ek.Want, obj)}
	case *kind.Enum:
		return []Problem{{Code: ProblemInvalidValue, Field: field, Message: fmt.Sprintf("%q is %s; it must be one of %s", field, show(ek.Got), showAll(ek.Want))}}
	case *kind.Format:
		return []Problem{{Code: ProblemInvalidValue, Field: field, Message: fmt.Sprintf("%q is %s, not a valid %s%s", field, show(ek.Got), ek.Want, formatExample[ek.Want])}}
	}
	msg := e.ErrorKind.LocalizedString(english)
	if field == "" {
		return []Problem{{Code: ProblemSchemaViolation, Message: msg}}
	}
	return []Problem{{Code: ProblemSchemaViolation, Field: field, Message: fmt.Sprintf("%q: %s", field, msg)}}
}

// english prints the validator's own words for a failure no named problem
// describes.
var english = message.NewPrinter(language.English)

func missing(k Kind, at string, names []string) []Problem {
	var out []Problem
	for _, n := range names {
		field := joinField(at, n)
		msg := fmt.Sprintf("missing required field %q", field)
		if want := fieldWant(k, at, n); want != "" {
			msg += ": " + want
		}
		out = append(out, Problem{Code: ProblemMissingField, Field: field, Message: msg})
	}
	return out
}

func fieldWant(k Kind, at, name string) string {
	if at != "" || (k != KindResponse && k != KindResponseRead) {
		return ""
	}
	for _, f := range responseFields {
		if f.name == name {
			return f.want
		}
	}
	return ""
}

func unknown(envelope bool, at string, names []string) []Problem {
	var out []Problem
	for _, n := range names {
		field := joinField(at, n)
		if envelope && n == "result" {
			out = append(out, Problem{Code: ProblemResultField, Field: field, Message: `found "result" instead of "response": the agent's output belongs in "response", as a string`})
			continue
		}
		msg := fmt.Sprintf("unknown field %q", field)
		if envelope {
			msg += ": the envelope has only " + envelopeFieldList()
		}
		out = append(out, Problem{Code: ProblemUnknownField, Field: field, Message: msg})
	}
	return out
}

func wrongType(response bool, field, got string, want []string, obj map[string]any) Problem {
	switch {
	case response && field == "response":
		return Problem{Code: ProblemResponseObject, Field: field, Message: fmt.Sprintf(`"response" is %s, not a string: JSON-encode the agent's output once and put the text in "response", e.g. "{\"sections\": [...]}"`, article(got))}
	case response && field == "duration_seconds" && got == "string":
		return Problem{Code: ProblemDurationString, Field: field, Message: fmt.Sprintf(`"duration_seconds" is the string %s, not a number: write it without quotes`, show(obj["duration_seconds"]))}
	}
	return Problem{Code: ProblemWrongType, Field: field, Message: fmt.Sprintf("%q is %s; it must be %s", field, article(got), strings.Join(want, " or "))}
}

var formatExample = map[string]string{
	"date-time": " (write an ISO 8601 time such as 2025-11-24T14:22:45Z)",
	"uuid":      " (such as 550e8400-e29b-41d4-a716-446655440000)",
}

// tidy drops what a named mistake already says and orders the problems:
// the seed's mistakes first, then fields in the envelope's order.
func tidy(ps []Problem) []Problem {
	named := map[string]bool{}
	for _, p := range ps {
		named[p.Code] = true
	}
	out := ps[:0]
	for _, p := range ps {
		if p.Code == ProblemMissingField && p.Field == "response" && named[ProblemResultField] {
			continue // "result instead of response" already says it
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if ri, rj := codeRank(out[i].Code), codeRank(out[j].Code); ri != rj {
			return ri < rj
		}
		if fi, fj := fieldRank(out[i].Field), fieldRank(out[j].Field); fi != fj {
			return fi < fj
		}
		return out[i].Field < out[j].Field
	})
	return out
}

var codeOrder = []string{ProblemNotJSON, ProblemNotObject, ProblemResultField, ProblemResponseObject, ProblemMissingField, ProblemDurationString}

func codeRank(code string) int {
	for i, c := range codeOrder {
		if c == code {
			return i
		}
	}
	return len(codeOrder)
}

func fieldRank(field string) int {
	for i, f := range responseFields {
		if f.name == field {
			return i
		}
	}
	return len(responseFields)
}

func envelopeFieldList() string {
	names := make([]string, len(responseFields))
	for i, f := range responseFields {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

func joinField(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

// show renders a value found in a document for a message.
func show(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

func showAll(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = show(v)
	}
	return strings.Join(parts, ", ")
}

func typeName(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "number"
}

func article(typ string) string {
	switch typ {
	case "object", "array", "integer":
		return "an " + typ
	case "null":
		return "null"
	}
	return "a " + typ
}

// FixCommand is the command that writes a document of kind k right, for
// the state directory dir ("" to leave --state-dir out).
func FixCommand(k Kind, dir string) string {
	sd := ""
	if dir != "" {
		sd = " --state-dir " + shellQuote(dir)
	}
	switch k {
	case KindRequest:
		return "baton bridge request" + sd + " --agent NAME --prompt-file FILE"
	case KindCheckpoint:
		return "baton bridge clean" + sd + " (then start the run again)"
	}
	return "baton bridge respond" + sd + " --input AGENT_OUTPUT_FILE"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
