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
