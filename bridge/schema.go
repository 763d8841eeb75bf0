package bridge

import (
	"bytes"
	"embed"
	"errors"
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

// compiled holds the shipped schemas (draft-07, formats asserted), compiled
// the first time a document is checked.
var compiled = sync.OnceValues(func() (map[Kind]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	out := make(map[Kind]*jsonschema.Schema, len(schemaFiles))
	for k, name := range schemaFiles {
		raw, err := Schema(k)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		url := "https://baton.invalid/bridge/" + name
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		if out[k], err = c.Compile(url); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
	}
	return out, nil
})

// decode reads exactly one JSON value, numbers as json.Number, as the
// validator takes it.
func decode(data []byte) (any, error) { return jsonschema.UnmarshalJSON(bytes.NewReader(data)) }

// validate checks a decoded document against k's schema: the failures
// found (the leaves of the validator's error tree, each with its keyword's
// kind and the value's location), none when it is valid, or an error when
// the embedded schemas do not compile.
func validate(k Kind, doc any) ([]*jsonschema.ValidationError, error) {
	schemas, err := compiled()
	if err != nil {
		return nil, fmt.Errorf("the embedded bridge schemas do not compile (a bug): %w", err)
	}
	err = schemas[k].Validate(doc)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil, nil
	}
	if !errors.As(err, &ve) {
		return nil, err
	}
	return leaves(ve, nil), nil
}

// leaves lists the errors of the tree under e that have no causes.
func leaves(e *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return append(out, e)
	}
	for _, c := range e.Causes {
		out = leaves(c, out)
	}
	return out
}
