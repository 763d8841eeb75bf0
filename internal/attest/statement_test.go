package attest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/attest"
)

func landing() attest.Landing {
	h := func(c string) string { return strings.Repeat(c, 40) }
	return attest.Landing{
		Item:     attest.Item{ID: "F001", Kind: "feature", Features: []string{"F001"}, Branch: "feature/f001"},
		Into:     "main",
		Merge:    attest.Merge{Commit: h("a"), Onto: h("b"), Head: h("c"), Tree: h("d"), Signed: true, SignedBy: "person:0123456789abcdef"},
		Sessions: []attest.Session{{ID: 2, Role: "IMPLEMENT", From: h("b"), To: h("c"), Commits: []string{h("c")}}},
		Reviews:  []attest.Review{{ID: 1, Verdict: "PASS", Role: "REVIEW", Session: 3, From: h("b"), To: h("c")}},
		Gate:     &attest.Gate{Command: "go test ./...", Tree: h("d"), ExitCode: 0, Digest: "sha256:" + strings.Repeat("0", 64)},
		Log:      attest.LogEntry{Seq: 9, Hash: strings.Repeat("e", 64), At: "2025-01-29T10:00:00Z"},
	}
}

// TestStatementSchema: the statement baton writes parses back and its
// predicate validates against the shipped schema; a predicate the schema
// refuses, another statement type or predicate type, is refused.
func TestStatementSchema(t *testing.T) {
	good := attest.NewStatement("main", strings.Repeat("a", 40), landing())
	b, _ := json.Marshal(good)
	st, err := attest.ParseStatement(b)
	if err != nil || st.Commit() != strings.Repeat("a", 40) || st.Predicate.Item.ID != "F001" {
		t.Fatalf("ParseStatement(baton's own) = %+v, %v", st, err)
	}
	noGate := landing()
	noGate.Gate = nil
	for _, tc := range []struct {
		name string
		edit func(s *attest.Statement)
		want string // "" for valid
	}{
		{"no gate configured", func(s *attest.Statement) { s.Predicate = noGate }, ""},
		{"a failing gate", func(s *attest.Statement) { s.Predicate.Gate.ExitCode = 1 }, "/gate"},
		{"an abbreviated commit", func(s *attest.Statement) { s.Predicate.Merge.Commit = "abc1234" }, "/merge/commit"},
		{"no review", func(s *attest.Statement) { s.Predicate.Reviews = []attest.Review{} }, "/reviews"},
		{"an unknown verdict", func(s *attest.Statement) { s.Predicate.Reviews[0].Verdict = "LGTM" }, "/reviews/0/verdict"},
		{"a session key that is not one", func(s *attest.Statement) { s.Predicate.Merge.SessionKey = "rsa AAAA" }, "/merge/session_key"},
		{"another statement type", func(s *attest.Statement) { s.Type = "https://in-toto.io/Statement/v0.1" }, "_type"},
		{"another predicate", func(s *attest.Statement) { s.PredicateType = "https://slsa.dev/provenance/v1" }, "predicateType"},
		{"two subjects", func(s *attest.Statement) { s.Subject = append(s.Subject, s.Subject[0]) }, "one subject"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := attest.NewStatement("main", strings.Repeat("a", 40), landing())
			tc.edit(&s)
			b, _ := json.Marshal(s)
			_, err := attest.ParseStatement(b)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (!errors.Is(err, attest.ErrStatement) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

func FuzzParseStatement(f *testing.F) {
	b, _ := json.Marshal(attest.NewStatement("main", strings.Repeat("a", 40), landing()))
	f.Add(b)
	f.Add([]byte(`{"_type":"https://in-toto.io/Statement/v1","predicateType":"https://baton-cli.github.io/attestation/landing/v1","predicate":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := attest.ParseStatement(data)
		if err == nil && len(s.Commit()) != 40 {
			t.Fatalf("accepted a statement about %q", s.Commit())
		}
	})
}
