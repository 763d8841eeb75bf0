package bridge

import (
	"bytes"
	"embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Kind names a bridge document and the schema it is checked against.
type Kind string

// The documents. KindResponse is what a host must write (seed 004);
// KindResponseRead is what baton accepts on resume (any seed).
const (
	KindRequest      Kind = "request"
	KindResponse     Kind = "response"
	KindResponseRead Kind = "response-read"
	KindCheckpoint   Kind = "checkpoint"
)

//go:embed schemas/*.json
var schemaFS embed.FS

var schemaFiles = map[Kind]string{
	KindRequest:      "agent-request.schema.json",
	KindResponse:     "agent-response.schema.json",
	KindResponseRead: "agent-response-read.schema.json",
	KindCheckpoint:   "checkpoint.schema.json",
}

// SchemaFile is the name of k's schema in the embedded schemas/ directory.
func SchemaFile(k Kind) string { return schemaFiles[k] }

// Schema returns the text of k's JSON Schema, as shipped.
func Schema(k Kind) ([]byte, error) { return schemaFS.ReadFile("schemas/" + schemaFiles[k]) }

const schemaBase = "https://baton.invalid/bridge/"

var compiled = sync.OnceValues(func() (map[Kind]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, name := range schemaFiles {
		raw, err := schemaFS.ReadFile("schemas/" + name)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		if err := c.AddResource(schemaBase+name, doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
	}
	out := make(map[Kind]*jsonschema.Schema, len(schemaFiles))
	for k, name := range schemaFiles {
		s, err := c.Compile(schemaBase + name)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		out[k] = s
	}
	return out, nil
})

// validate checks a decoded document (numbers as json.Number) against k's
// schema: nil, or a *jsonschema.ValidationError.
func validate(k Kind, doc any) error {
	schemas, err := compiled()
	if err != nil {
		return fmt.Errorf("the embedded bridge schemas do not compile (a bug): %w", err)
	}
	return schemas[k].Validate(doc)
}
