package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/itchyny/gojq"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// Filtering a command's JSON document, as gh does: --fields keeps some
// fields, --jq runs a jq expression over the document. Both imply --json.

// prepareFilters checks --fields and --jq before the command runs, so that
// a mistake in them is a usage error and nothing is done.
func (a *App) prepareFilters() error {
	if a.g.JQ != "" {
		q, err := gojq.Parse(a.g.JQ)
		if err != nil {
			return errs.New(errs.Usage, "--jq: %v", err)
		}
		code, err := gojq.Compile(q)
		if err != nil {
			return errs.New(errs.Usage, "--jq: %v", err)
		}
		a.jq = code
		a.g.JSON = true
	}
	if a.g.Fields != "" {
		for _, f := range strings.Split(a.g.Fields, ",") {
			if f = strings.TrimSpace(f); f != "" {
				a.fields = append(a.fields, f)
			}
		}
		if len(a.fields) == 0 {
			return errs.New(errs.Usage, "--fields: name at least one field (e.g. --fields id,name)")
		}
		if err := a.checkFields(); err != nil {
			return err
		}
		a.g.JSON = true
	}
	return nil
}

// filtered applies --fields, then --jq, to a document; without either it
// is the document, indented.
func (a *App) filtered(doc []byte) ([]byte, error) {
	if len(a.fields) > 0 {
		var err error
		if doc, err = a.selectFields(doc); err != nil {
			return nil, err
		}
	}
	if a.jq == nil {
		return append(jsondoc.Reindent(doc), '\n'), nil
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	var out strings.Builder
	iter := a.jq.Run(v)
	for {
		r, ok := iter.Next()
		if !ok {
			break
		}
		if err, ok := r.(error); ok {
			if h, ok := err.(*gojq.HaltError); ok && h.Value() == nil {
				break
			}
			return nil, errs.New(errs.Usage, "--jq: %v", err)
		}
		if s, ok := r.(string); ok {
			out.WriteString(s + "\n")
			continue
		}
		b, err := gojq.Marshal(r)
		if err != nil {
			return nil, errs.New(errs.Usage, "--jq: %v", err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	return []byte(out.String()), nil
}

// selectFields keeps the --fields (gjson paths) of an object, or of each
// record of the one list an object holds (progress list's sessions,
// features list's features, ...), as gh's --json FIELDS does. A path whose
// first key neither the document nor its schema knows is not found (exit
// 4), as with --field; after a write, whose work is done, it is a warning.
func (a *App) selectFields(doc []byte) ([]byte, error) {
	r := gjson.ParseBytes(doc)
	warnings := r.Get("warnings").Value()
	s := schemas[a.cmdName]
	if r.IsArray() { // a list of records, as verification list prints
		return a.selectFromList(r, s)
	}
	list := onlyList(r)
	known, of := schemaFields(s), "the document"
	if list != "" && !anyField(r, a.fields) {
		known, of = schemaFields(itemsOf(propertyOf(s, list))), "each record of "+strconv.Quote(list)
		r.Get(list).ForEach(func(_, v gjson.Result) bool { addKeys(known, v); return true })
	} else {
		list = ""
		addKeys(known, r)
	}
	if err := unknownFields(a.fields, known, of); err != nil {
		if !writeOp(a.cmdName) {
			return nil, err
		}
		w, _ := warnings.([]any)
		warnings = append(w, err.Error()+" (printed as null)")
	}
	if list == "" {
		out := a.pick(r)
		if w, _ := warnings.([]any); len(w) > 0 {
			out["warnings"] = w
		}
		return jsondoc.Compact(out), nil
	}
	items := []any{}
	r.Get(list).ForEach(func(_, v gjson.Result) bool { items = append(items, a.pick(v)); return true })
	return jsondoc.Compact(map[string]any{list: items, "warnings": warnings}), nil
}

// selectFromList is selectFields for a document that is a list of records
// (s its schema).
func (a *App) selectFromList(r gjson.Result, s any) ([]byte, error) {
	known := schemaFields(itemsOf(s))
	r.ForEach(func(_, v gjson.Result) bool { addKeys(known, v); return true })
	if err := unknownFields(a.fields, known, "each record"); err != nil {
		return nil, err
	}
	items := []any{}
	r.ForEach(func(_, v gjson.Result) bool { items = append(items, a.pick(v)); return true })
	return jsondoc.Compact(items), nil
}

// pick is the --fields of one object.
func (a *App) pick(obj gjson.Result) map[string]any {
	m := map[string]any{}
	for _, f := range a.fields {
		m[f] = obj.Get(f).Value()
	}
	return m
}

// checkFields refuses, before the command runs, a --fields path whose
// first key the command's schema does not name, for the document or for
// the records of the one list it holds. A document that is a record of the state
// files, or lists them, may hold fields of other tools that no schema
// names: its paths are checked against the document itself.
func (a *App) checkFields() error {
	s, ok := schemas[a.cmdName]
	if !ok || storedRecord(s) {
		return nil
	}
	of := "the document"
	if it, ok := itemsOf(s).(schema); ok { // a list of records
		s, of = it, "each record"
	}
	known := schemaFields(s)
	var lists []any
	for k := range known {
		if it := itemsOf(propertyOf(s, k)); it != nil && k != "warnings" {
			lists = append(lists, it)
		}
	}
	if len(lists) == 1 { // as onlyList: the fields may be its records'
		if storedRecord(lists[0]) {
			return nil
		}
		maps.Copy(known, schemaFields(lists[0]))
	}
	return unknownFields(a.fields, known, of)
}

// storedRecords are the $defs of the records the state files hold.
var storedRecords = map[string]bool{"session": true, "review": true, "fix": true, "feature": true, "status": true}

// storedRecord says whether s is, or is an alternative of, a record the
// state files hold.
func storedRecord(s any) bool {
	for _, m := range resolved(s) {
		if ref, ok := m["$ref"].(string); ok && storedRecords[strings.TrimPrefix(ref, "#/$defs/")] {
			return true
		}
	}
	return false
}

// writeOp says whether the command path names an operation that may write.
func writeOp(path string) bool {
	name := strings.ReplaceAll(path, " ", ".")
	for _, op := range app.Operations() {
		if i := op.Info(); i.Name == name {
			return !i.ReadOnly
		}
	}
	return false
}

// unknownFields is the not-found error for the first of fields whose first
// key is not among known (nil when every one is).
func unknownFields(fields []string, known map[string]bool, of string) error {
	for _, f := range fields {
		if !known[topKey(f)] {
			delete(known, "warnings")
			return errs.New(errs.NotFound, "--fields: unknown field '%s'. Available fields of %s: %s", f, of, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
	}
	return nil
}

// addKeys adds the keys of the object r to known.
func addKeys(known map[string]bool, r gjson.Result) {
	r.ForEach(func(k, _ gjson.Result) bool { known[k.Str] = true; return true })
}

// schemaFields are the property names an object schema declares, through
// its $ref and its alternatives.
func schemaFields(s any) map[string]bool {
	out := map[string]bool{}
	for _, m := range resolved(s) {
		if p, ok := m["properties"].(schema); ok {
			for k := range p {
				out[k] = true
			}
		}
	}
	return out
}

// propertyOf is the schema of an object schema's property key (nil if none).
func propertyOf(s any, key string) any {
	for _, m := range resolved(s) {
		if p, ok := m["properties"].(schema); ok && p[key] != nil {
			return p[key]
		}
	}
	return nil
}

// itemsOf is the schema of an array schema's items (nil if none).
func itemsOf(s any) any {
	for _, m := range resolved(s) {
		if it, ok := m["items"]; ok {
			return it
		}
	}
	return nil
}

// resolved is s with its $ref followed into defs and its oneOf, anyOf and
// allOf alternatives listed: every schema a value of s may have to meet.
func resolved(s any) []schema {
	m, ok := s.(schema)
	if !ok {
		return nil
	}
	out := []schema{m}
	if ref, ok := m["$ref"].(string); ok {
		out = append(out, resolved(defs[strings.TrimPrefix(ref, "#/$defs/")])...)
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		alts, _ := m[k].([]schema)
		for _, alt := range alts {
			out = append(out, resolved(alt)...)
		}
	}
	return out
}

// onlyList names the one array field of a document besides warnings ("" if
// it has none or several).
func onlyList(r gjson.Result) string {
	name := ""
	n := 0
	r.ForEach(func(k, v gjson.Result) bool {
		if k.Str != "warnings" && v.IsArray() {
			name, n = k.Str, n+1
		}
		return true
	})
	if n != 1 {
		return ""
	}
	return name
}

func anyField(r gjson.Result, fields []string) bool {
	for _, f := range fields {
		if r.Get(f).Exists() {
			return true
		}
	}
	return false
}

// writeFiltered writes a document through the filters.
func (a *App) writeFiltered(w io.Writer, doc []byte) error {
	out, err := a.filtered(doc)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(w, string(out))
	return err
}
