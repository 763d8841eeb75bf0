package cli

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/app"
)

// hostile is text an agent may write into any field the report shows: it
// must come out as text, never as markup or as the end of an attribute.
const hostile = `<b x="1" y='2'>&amp;`

// fill sets every string reachable from v to hostile, gives every slice
// one element and every map of values the keys the template reads.
func fill(v reflect.Value, keys []string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(hostile)
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), keys)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), keys)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 { // json.RawMessage
			b, _ := json.Marshal(map[string]string{"summary": hostile})
			v.SetBytes(b)
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), keys)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		v.Set(reflect.MakeMap(v.Type()))
		for _, k := range keys {
			e := reflect.New(v.Type().Elem()).Elem()
			if e.Kind() == reflect.Interface && k == "commits" { // a session's, which the report ranges over
				e.Set(reflect.ValueOf([]any{map[string]any{"hash": hostile}}))
			} else if e.Kind() == reflect.Interface {
				e.Set(reflect.ValueOf(hostile))
			} else {
				fill(e, keys)
			}
			v.SetMapIndex(reflect.ValueOf(k), e)
		}
	}
}

// TestReportEscapesEveryField renders the report with hostile text in
// every field and key it reads: none of it may appear unescaped.
func TestReportEscapesEveryField(t *testing.T) {
	var keys []string
	for _, m := range regexp.MustCompile(`"([a-z_]+)"`).FindAllStringSubmatch(reportTemplate, -1) {
		keys = append(keys, m[1])
	}
	var d app.ReportData
	fill(reflect.ValueOf(&d).Elem(), keys)
	var b bytes.Buffer
	if err := renderReport(&b, d); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "&lt;b x=&#34;1&#34; y=&#39;2&#39;&gt;&amp;amp;"); n < 40 {
		t.Fatalf("the hostile text appears escaped %d times: the report did not show the fields", n)
	}
	for _, raw := range []string{"<b x", `"1"`, "'2'", ">&amp;<"} {
		if strings.Contains(out, raw) {
			i := strings.Index(out, raw)
			t.Errorf("the report shows %q unescaped: ...%s...", raw, out[max(0, i-80):min(len(out), i+80)])
		}
	}
}

// TestReportTemplateContexts keeps the report's actions where HTML escaping
// is all the escaping needed (escapeActions): element text and double-quoted
// attribute values — never in a script, a style, an unquoted attribute or
// a template defined apart (escapeActions escapes the main one).
func TestReportTemplateContexts(t *testing.T) {
	for _, p := range actionContextProblems(reportTemplate) {
		t.Error(p)
	}
	for tmpl, bad := range map[string]bool{
		`<p class="{{.A}}">{{.B}}</p><script>let a = 1;</script>{{if .C}}x{{end}}`: false,
		`<script>let a = "{{.A}}";</script>`:                                       true,
		`<style>p { color: {{.A}} }</style>`:                                       true,
		`<p class={{.A}}>`:                                                         true,
		`<p {{.A}}>`:                                                               true,
		`{{define "x"}}{{.A}}{{end}}`:                                              true,
	} {
		if got := len(actionContextProblems(tmpl)) > 0; got != bad {
			t.Errorf("%s: found a problem %v, want %v", tmpl, got, bad)
		}
	}
}

// actionContextProblems lists the actions of tmpl that print somewhere
// other than element text or a double-quoted attribute value.
func actionContextProblems(tmpl string) []string {
	var problems []string
	action := regexp.MustCompile(`\{\{.*?\}\}`)
	control := regexp.MustCompile(`^\{\{-?\s*(if|else|end|range|with|break|continue|/\*)`)
	for _, m := range action.FindAllStringIndex(tmpl, -1) {
		act, before := tmpl[m[0]:m[1]], tmpl[:m[0]]
		if regexp.MustCompile(`^\{\{-?\s*(define|template|block)\b`).MatchString(act) {
			problems = append(problems, act+": the report is one template (escapeActions escapes only its own actions)")
		}
		if control.MatchString(act) {
			continue
		}
		lower := strings.ToLower(before)
		for _, el := range []string{"script", "style"} {
			if strings.LastIndex(lower, "<"+el) > strings.LastIndex(lower, "</"+el) {
				problems = append(problems, act+" is inside a <"+el+">, where HTML escaping is not enough")
			}
		}
		if tag := strings.LastIndex(before, "<"); tag > strings.LastIndex(before, ">") {
			if inTag := action.ReplaceAllString(before[tag:], ""); strings.Count(inTag, `"`)%2 != 1 {
				problems = append(problems, act+" is in a tag outside a double-quoted attribute value: "+before[tag:])
			}
		}
	}
	return problems
}
