package attest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// StatementType is the in-toto Statement's _type, version 1.
const StatementType = "https://in-toto.io/Statement/v1"

// LandingType is the predicate type of baton's landing attestation; a
// change that a reader of version 1 would misread gets a new version.
const LandingType = "https://baton-cli.github.io/attestation/landing/v1"

// Statement is an in-toto Statement v1 whose predicate is a Landing.
type Statement struct {
	Type          string    `json:"_type"`
	Subject       []Subject `json:"subject"`
	PredicateType string    `json:"predicateType"`
	Predicate     Landing   `json:"predicate"`
}

// Subject is what a statement is about: here, a commit.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Landing is what baton attests when an item lands on main: what landed,
// by whose work, judged by which reviews, checked by which gate run, and
// the audit log's entry that records it. Its schema is landing-v1.json.
type Landing struct {
	Item     Item      `json:"item"`
	Into     string    `json:"into"`
	Merge    Merge     `json:"merge"`
	Sessions []Session `json:"sessions"`
	Reviews  []Review  `json:"reviews"`
	Gate     *Gate     `json:"gate"`
	Log      LogEntry  `json:"log"`
}

// Item is the work item that landed: a feature (or several), a bug or a
// debt batch, and its branch.
type Item struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"`
	Features []string `json:"features"`
	Branch   string   `json:"branch"`
}

// Merge is how main moved: from Onto to Commit, bringing Head (the
// reviewed branch head); Tree is Commit's tree. Signed says baton wrote
// the commit and signed it, with the key SignedBy names (a person's key
// id, or "session:N" with that session's public key in SessionKey).
type Merge struct {
	Commit      string `json:"commit"`
	Onto        string `json:"onto"`
	Head        string `json:"head"`
	Tree        string `json:"tree"`
	FastForward bool   `json:"fast_forward"`
	Signed      bool   `json:"signed"`
	SignedBy    string `json:"signed_by,omitempty"`
	SessionKey  string `json:"session_key,omitempty"`
}

// Session is an agent session whose commits landed, with its role.
type Session struct {
	ID      int      `json:"session_id"`
	Role    string   `json:"role"`
	From    string   `json:"from"`
	To      string   `json:"to"`
	Commits []string `json:"commits"`
}

// Review is a review of the item since its last rejection: its verdict,
// who gave it (the role, and the session, 0 for none), and the range it
// judged (To is the reviewed head).
type Review struct {
	ID      int    `json:"review_id"`
	Verdict string `json:"verdict"`
	Role    string `json:"role"`
	Session int    `json:"session_id"`
	From    string `json:"from"`
	To      string `json:"to"`
}

// Gate is the run of the project's gate the landing passed.
type Gate struct {
	Command  string `json:"command"`
	Tree     string `json:"tree"`
	ExitCode int    `json:"exit_code"`
	Digest   string `json:"output_sha256"`
	// Batch is the reviews of the items gated together in one run, when
	// there were several: the run's tree is then the one main reached
	// when the batch had landed.
	Batch []int `json:"batch,omitempty"`
}

// LogEntry is the audit log's entry that records the landing.
type LogEntry struct {
	Seq  int    `json:"seq"`
	Hash string `json:"hash"`
	At   string `json:"timestamp"`
}

// NewStatement is the statement that commit, on branch into, landed as l
// says.
func NewStatement(into, commit string, l Landing) Statement {
	return Statement{Type: StatementType, PredicateType: LandingType, Predicate: l,
		Subject: []Subject{{Name: into, Digest: map[string]string{"gitCommit": commit}}}}
}

// ErrStatement is a payload that is not a landing statement baton reads.
var ErrStatement = errors.New("not a landing statement")

// ParseStatement reads a statement's JSON: an in-toto Statement v1 with
// one gitCommit subject and a landing predicate that its schema accepts.
func ParseStatement(b []byte) (Statement, error) {
	var raw struct {
		Type          string          `json:"_type"`
		PredicateType string          `json:"predicateType"`
		Predicate     json.RawMessage `json:"predicate"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Statement{}, fmt.Errorf("%w: %v", ErrStatement, err)
	}
	switch {
	case raw.Type != StatementType:
		return Statement{}, fmt.Errorf("%w: _type is %q, not %q", ErrStatement, raw.Type, StatementType)
	case raw.PredicateType != LandingType:
		return Statement{}, fmt.Errorf("%w: predicateType is %q, not %q", ErrStatement, raw.PredicateType, LandingType)
	}
	if err := ValidatePredicate(raw.Predicate); err != nil {
		return Statement{}, fmt.Errorf("%w: %v", ErrStatement, err)
	}
	var s Statement
	if err := json.Unmarshal(b, &s); err != nil {
		return Statement{}, fmt.Errorf("%w: %v", ErrStatement, err)
	}
	if len(s.Subject) != 1 || s.Subject[0].Digest["gitCommit"] != s.Predicate.Merge.Commit {
		return Statement{}, fmt.Errorf("%w: one subject expected, whose gitCommit digest is the predicate's merge commit", ErrStatement)
	}
	return s, nil
}

// Commit is the commit the statement is about.
func (s Statement) Commit() string { return s.Subject[0].Digest["gitCommit"] }

//go:embed landing-v1.json
var landingSchema []byte

// LandingSchema is the JSON Schema of the landing predicate, version 1.
func LandingSchema() []byte { return bytes.Clone(landingSchema) }

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(landingSchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(LandingType+".json", doc); err != nil {
		return nil, err
	}
	return c.Compile(LandingType + ".json")
})

// ValidatePredicate checks a landing predicate's JSON against its schema;
// the error names each place that fails.
func ValidatePredicate(b []byte) error {
	s, err := compiled()
	if err != nil {
		return fmt.Errorf("the landing schema does not compile (a bug): %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if err := s.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(strings.Join(leaves(ve), "; "))
		}
		return err
	}
	return nil
}

var english = message.NewPrinter(language.English)

// leaves are the innermost failures of a validation error, each at its
// place in the document.
func leaves(ve *jsonschema.ValidationError) []string {
	if len(ve.Causes) == 0 {
		return []string{fmt.Sprintf("at /%s: %s", strings.Join(ve.InstanceLocation, "/"), ve.ErrorKind.LocalizedString(english))}
	}
	var out []string
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}
