package mcpserver

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// serveLines serves the messages in input (one a line) to a server of
// role with no state behind it, and returns its replies in order.
func serveLines(t *testing.T, role, input string) []gjson.Result {
	t.Helper()
	s := &Server{role: role, version: "test"}
	s.offer()
	var out strings.Builder
	if err := s.Serve(context.Background(), strings.NewReader(input), &out); err != nil {
		t.Fatal(err)
	}
	var replies []gjson.Result
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !gjson.Valid(line) {
			t.Fatalf("a reply is not one JSON value a line: %q", line)
		}
		replies = append(replies, gjson.Parse(line))
	}
	return replies
}

// TestProtocol: the handshake agrees on a version the server speaks,
// notifications get no reply, unknown methods and tools and broken lines
// are JSON-RPC errors, and a tool's arguments are checked against its
// schema before it runs.
func TestProtocol(t *testing.T) {
	replies := serveLines(t, "", strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}`,
		`{"jsonrpc":"2.0","id":"p","method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"server/discover"}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"merge","arguments":{}}}`,
		`{not json`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"features_get","arguments":{"id":"F001","as":"HUMAN"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"features_get","arguments":{"id":7}}}`,
	}, "\n"))
	byID := map[string]gjson.Result{}
	for _, r := range replies {
		byID[r.Get("id").Raw] = r
	}
	if len(replies) != 9 {
		t.Fatalf("%d replies, want 9 (none to the notification): %v", len(replies), replies)
	}
	for id, want := range map[string]string{
		`1`:    `result.protocolVersion:"2025-06-18"`,
		`2`:    `result.protocolVersion:"` + protocolVersions[0] + `"`,
		`"p"`:  `result:{}`,
		`3`:    `error.code:-32601`,
		`4`:    `error.code:-32602`,
		`null`: `error.code:-32700`,
		`6`:    `result.isError:true`,
		`7`:    `result.isError:true`,
	} {
		path, value, _ := strings.Cut(want, ":")
		if got := byID[id].Get(path).Raw; got != value {
			t.Errorf("reply %s: %s = %s, want %s (%s)", id, path, got, value, byID[id].Raw)
		}
	}
	if got := byID["1"].Get("result.capabilities.tools.listChanged").Bool(); !got {
		t.Errorf("initialize does not announce the tool list's changes: %s", byID["1"].Raw)
	}
	if got := byID["5"].Get("result.tools.#").Int(); got != 11 {
		t.Errorf("tools/list of an unbound server: %d tools, want the 11 reads", got)
	}
	if got := byID["6"].Get("result.content.0.text").String(); !strings.Contains(got, `unexpected property "as"`) {
		t.Errorf("an undeclared argument: %s", got)
	}
	if got := byID["7"].Get("result.content.0.text").String(); !strings.Contains(got, "arguments.id: got number, want string") {
		t.Errorf("an argument of the wrong type: %s", got)
	}
}

// TestUnbindNotifies: when the bound session ends, the writes leave the
// list and a client being served is told the list changed.
func TestUnbindNotifies(t *testing.T) {
	s := &Server{role: "IMPLEMENT"}
	s.offer()
	var out strings.Builder
	s.out = &conn{w: &out}
	before := len(s.listTools())
	s.unbind()
	if after := len(s.listTools()); after != 11 || after >= before {
		t.Errorf("%d tools before the session's end, %d after, want the 11 reads", before, after)
	}
	if got := gjson.Get(out.String(), "method").String(); got != "notifications/tools/list_changed" {
		t.Errorf("sent %q, want the list_changed notification", out.String())
	}
}

// schemaOf infers v's type's schema.
func schemaOf(v any) *schema { return schemaFor(reflect.TypeOf(v), map[reflect.Type]bool{}) }

type inner struct {
	Name string `json:"name"`
	N    int    `json:"n,omitempty"`
}

type outer struct {
	inner
	Items []inner          `json:"items,omitempty" jsonschema:"the items"`
	Ratio *float64         `json:"ratio,omitempty"`
	Tags  map[string]bool  `json:"tags,omitempty"`
	Any   any              `json:"any,omitempty"`
	Skip  string           `json:"-"`
	Self  *outer           `json:"self,omitempty"`
	Meta  map[string]inner `json:"meta,omitempty"`
}

// TestSchemaCheck: what the inferred schema of a struct accepts and
// refuses: required properties, no undeclared one at any depth, types
// (integers as JSON numbers without a fraction), null only where Go has a
// nil, embedded fields as the struct's own.
func TestSchemaCheck(t *testing.T) {
	s := schemaOf(outer{})
	if s.Properties["items"].Description != "the items" || !reflect.DeepEqual(s.Required, []string{"name"}) {
		t.Fatalf("schema: %+v", s)
	}
	for _, c := range []struct {
		in, err string
	}{
		{`{"name":"a"}`, ""},
		{`{"name":"a","n":3,"items":[{"name":"b"}],"ratio":0.5,"tags":{"x":true},"any":[1,"2"],"self":{"name":"c"},"meta":{"k":{"name":"d"}}}`, ""},
		{`{"name":"a","ratio":null,"items":null}`, ""},
		{`{}`, `missing property "name"`},
		{`{"name":null}`, "arguments.name: got null, want string"},
		{`{"name":"a","n":1.5}`, "arguments.n: got number, want integer"},
		{`{"name":"a","Skip":"x"}`, `unexpected property "Skip"`},
		{`{"name":"a","items":[{"name":"b","extra":1}]}`, `arguments.items[0]: unexpected property "extra"`},
		{`{"name":"a","tags":{"x":"yes"}}`, "arguments.tags.x: got string, want boolean"},
		{`{"name":"a","meta":{"k":{}}}`, `arguments.meta.k: missing property "name"`},
		{`[]`, "arguments: got array, want object"},
	} {
		var v outer
		err := decodeArgs(s, []byte(c.in), &v)
		switch {
		case err != nil && (c.err == "" || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want %q", c.in, err, c.err)
		case err == nil && c.err != "":
			t.Errorf("%s: accepted, want %q", c.in, c.err)
		}
	}
}
