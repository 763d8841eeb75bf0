package bridge

import (
	"embed"
	"fmt"

	"github.com/baton-cli/baton/bridge/schemacheck"
	"github.com/baton-cli/baton/internal/lazy"
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

var schemaFiles = lazy.Value[map[Kind]string]{Build: func() map[Kind]string {
	return map[Kind]string{
		KindRequest:      "agent-request.schema.json",
		KindResponse:     "agent-response.schema.json",
		KindResponseRead: "agent-response-read.schema.json",
		KindCheckpoint:   "checkpoint.schema.json",
	}
}}

// SchemaFile is the name of k's schema in the embedded schemas/ directory.
func SchemaFile(k Kind) string { return schemaFiles.Get()[k] }

// Schema returns the text of k's JSON Schema, as shipped.
func Schema(k Kind) ([]byte, error) { return schemaFS.ReadFile("schemas/" + schemaFiles.Get()[k]) }

// compiled holds the shipped schemas, compiled the first time a document
// is checked: a program that never checks one pays nothing for them.
var compiled = lazy.Values[map[Kind]*schemacheck.Schema, error]{Build: func() (map[Kind]*schemacheck.Schema, error) {
	out := make(map[Kind]*schemacheck.Schema, len(schemaFiles.Get()))
	for k, name := range schemaFiles.Get() {
		raw, err := schemaFS.ReadFile("schemas/" + name)
		if err != nil {
			return nil, err
		}
		s, err := schemacheck.Compile(raw)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		out[k] = s
	}
	return out, nil
}}

// validate checks a document decoded by schemacheck.Decode against k's
// schema: the errors found, none when it is valid, or an error when the
// embedded schemas do not compile.
func validate(k Kind, doc any) ([]*schemacheck.Error, error) {
	schemas, err := compiled.Get()
	if err != nil {
		return nil, fmt.Errorf("the embedded bridge schemas do not compile (a bug): %w", err)
	}
	return schemas[k].Validate(doc), nil
}
