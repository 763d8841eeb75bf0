package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/itchyny/gojq"
	"github.com/tidwall/gjson"

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
		a.g.JSON = true
	}
	return nil
}

// filtered applies --fields, then --jq, to a document; without either it
// is the document, indented.
func (a *App) filtered(doc []byte) ([]byte, error) {
	if len(a.fields) > 0 {
		doc = selectFields(doc, a.fields)
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

// selectFields keeps the named fields (gjson paths) of an object, or of
// each record of the one list an object holds (progress list's sessions,
// features list's features, ...), as gh's --json FIELDS does.
func selectFields(doc []byte, fields []string) []byte {
	r := gjson.ParseBytes(doc)
	pick := func(obj gjson.Result) map[string]any {
		m := map[string]any{}
		for _, f := range fields {
			m[f] = obj.Get(f).Value()
		}
		return m
	}
	if list := onlyList(r); list != "" && !anyField(r, fields) {
		items := []any{}
		r.Get(list).ForEach(func(_, v gjson.Result) bool { items = append(items, pick(v)); return true })
		return jsondoc.Compact(map[string]any{list: items, "warnings": r.Get("warnings").Value()})
	}
	return jsondoc.Compact(pick(r))
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
