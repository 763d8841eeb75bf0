package jsondoc_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/baton-cli/baton/bench/gen"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
)

// format is a state file format with both validations: the one pass
// (jsondoc.Validate with the format's Layout) and the full parser it
// falls back to (ParseChecked, the oracle); Parse and Validate use both.
type format struct {
	name     string
	layout   *jsondoc.Shape
	checked  func([]byte) (*parsed, error) // the full parser alone
	parse    func([]byte) (*parsed, error) // Parse: the one pass, else the full parser
	validate func([]byte) (jsondoc.Facts, error)
}

// parsed is what a parse gives that the next command relies on: the
// facts, the next ids, the file as it is written back.
type parsed struct {
	facts jsondoc.Facts
	next  []int
	bytes string
}

func progressParsed(parse func([]byte) (*progress.File, error)) func([]byte) (*parsed, error) {
	return func(b []byte) (*parsed, error) {
		f, err := parse(b)
		if err != nil {
			return nil, err
		}
		facts := f.ReadFacts()
		return &parsed{facts, []int{f.NextSessionID()}, string(f.Bytes())}, nil
	}
}

func reviewsParsed(parse func([]byte) (*reviews.File, error)) func([]byte) (*parsed, error) {
	return func(b []byte) (*parsed, error) {
		f, err := parse(b)
		if err != nil {
			return nil, err
		}
		facts := f.ReadFacts()
		return &parsed{facts, []int{f.NextReviewID(), f.NextFixID(), len(f.Reviews()), len(f.Fixes())}, string(f.Bytes())}, nil
	}
}

var formats = []format{
	{"progress", progress.Layout, progressParsed(progress.ParseChecked), progressParsed(progress.Parse), progress.Validate},
	{"reviews", reviews.Layout, reviewsParsed(reviews.ParseChecked), reviewsParsed(reviews.Parse), reviews.Validate},
}

// sameVerdict fails when the one pass accepts what the full parser
// refuses, or gives other facts, or when Validate's or Parse's answer
// (error text, path, offset; facts, next ids, bytes written back) is not
// the full parser's. It reports whether the one pass accepted data.
func sameVerdict(t testing.TB, f format, data []byte) bool {
	t.Helper()
	facts, ok := jsondoc.Validate(data, f.layout)
	want, werr := f.checked(data)
	if ok && werr != nil {
		t.Fatalf("%s: the one pass accepts what the full parser refuses (%v):\n%s", f.name, werr, data)
	}
	if ok && !reflect.DeepEqual(facts, want.facts) {
		t.Fatalf("%s: facts %+v, the full parser's %+v:\n%s", f.name, facts, want.facts, data)
	}
	got, gerr := f.validate(data)
	sameError(t, f.name+": Validate", gerr, werr, data)
	if werr == nil && !reflect.DeepEqual(got, want.facts) {
		t.Fatalf("%s: Validate's facts %+v, the full parser's %+v", f.name, got, want.facts)
	}
	p, perr := f.parse(data)
	sameError(t, f.name+": Parse", perr, werr, data)
	if werr == nil && !reflect.DeepEqual(p, want) {
		t.Fatalf("%s: Parse gives %+v, the full parser %+v:\n%s", f.name, p, want, data)
	}
	return ok
}

func sameError(t testing.TB, what string, got, want error, data []byte) {
	t.Helper()
	var gi, wi *jsondoc.InvalidError
	switch {
	case (got == nil) != (want == nil):
		t.Fatalf("%s = %v, the full parser %v:\n%s", what, got, want, data)
	case want != nil && (!errors.As(got, &gi) || !errors.As(want, &wi) || *gi != *wi):
		t.Fatalf("%s = %#v, the full parser %#v:\n%s", what, got, want, data)
	}
}

func readSeed(t testing.TB, name string) string {
	b, err := os.ReadFile("../../testdata/seed/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	valueRE = regexp.MustCompile(`": ("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null|\[\]|\{\})`)
	keyRE   = regexp.MustCompile(`"([a-z_]+)":`)
	// what each value of a file is replaced with, one at a time
	replacements = []string{`null`, `0`, `1`, `2`, `-1`, `1.0`, `1e3`, `2.5`, `9007199254740992`, `9007199254740993`,
		`123456789012345678`, `"x"`, `""`, `"SUCCESS"`, `" pass "`, `"\u0050ASS"`, `"REJECT"`, `"IMPLEMENT"`, `true`, `[]`, `[1]`, `{}`, `{"critical": 1}`}
)

// mutations are variants of a valid file: each value replaced by values
// of every type, each key escaped, repeated or dropped, each line
// deleted, each byte deleted.
func mutations(seed string) []string {
	var out []string
	for _, m := range valueRE.FindAllStringSubmatchIndex(seed, -1) {
		for _, r := range replacements {
			out = append(out, seed[:m[2]]+r+seed[m[3]:])
		}
	}
	for _, m := range keyRE.FindAllStringSubmatchIndex(seed, -1) {
		key := seed[m[2]:m[3]]
		out = append(out, seed[:m[2]]+`\u00`+strings.ToLower(strings.TrimPrefix(hex(key[0]), "0x"))+key[1:]+seed[m[3]:])
		out = append(out, seed[:m[0]]+`"`+key+`": 1, `+seed[m[0]:])
		out = append(out, seed[:m[0]]+`"x`+key+`":`+seed[m[1]:])
	}
	lines := strings.Split(seed, "\n")
	for i := range lines {
		out = append(out, strings.Join(append(append([]string{}, lines[:i]...), lines[i+1:]...), "\n"))
	}
	for i := range len(seed) {
		out = append(out, seed[:i]+seed[i+1:])
	}
	return out
}

func hex(c byte) string {
	return "0x" + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15])
}

// The one pass accepts no file the full parser refuses, reports the same
// facts, and Validate answers every file as Parse does: over every
// mutation of the seed files and the refusals the packages' tests list.
func TestValidateAgreesWithParse(t *testing.T) {
	seeds := map[string][]string{
		"progress": {readSeed(t, "progress.json"), `{"status": {}, "sessions": []}`, `{"project": {}, "status": {"x": 1}, "sessions": []}`},
		"reviews":  {readSeed(t, "reviews.json"), `{"reviews": []}`, `{"reviews": [], "fixes": []}`},
	}
	for _, f := range formats {
		accepted, refused := 0, 0
		for _, seed := range seeds[f.name] {
			if !sameVerdict(t, f, []byte(seed)) {
				t.Errorf("%s: the one pass does not accept the valid file:\n%s", f.name, seed)
			}
			for _, m := range mutations(seed) {
				if sameVerdict(t, f, []byte(m)) {
					accepted++
				} else {
					refused++
				}
			}
		}
		t.Logf("%s: %d mutations accepted by the one pass, %d left to the full parser", f.name, accepted, refused)
		if accepted == 0 || refused == 0 {
			t.Errorf("%s: %d mutations accepted, %d refused: the mutations do not exercise both", f.name, accepted, refused)
		}
	}
}

// A file whose ids come in any order, repeat, or are written so that only
// the full parser can read them.
func TestValidateRecordIDs(t *testing.T) {
	for _, ids := range [][]string{{"1", "2"}, {"2", "1"}, {"3", "1", "2"}, {"1", "1"}, {"2", "1", "2"}, {"1", "2.0"}, {"1e0"}, {"0"}, {"-1"}, {"9007199254740992"}, {"9007199254740993"}, {`"1"`}} {
		var recs []string
		for _, id := range ids {
			recs = append(recs, `{"session_id": `+id+`}`)
		}
		sameVerdict(t, formats[0], []byte(`{"status": {}, "sessions": [`+strings.Join(recs, ", ")+`]}`))
		recs = recs[:0]
		for _, id := range ids {
			recs = append(recs, `{"review_id": `+id+`, "verdict": "PASS"}`)
		}
		sameVerdict(t, formats[1], []byte(`{"reviews": [`+strings.Join(recs, ", ")+`], "fixes": [{"fix_id": 1}]}`))
	}
}

// The generated 10,000-session state passes the one pass, with the full
// parser's facts.
func TestValidateLarge(t *testing.T) {
	st, err := gen.Generate(gen.Large, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, data := range [][]byte{st.Progress, st.Reviews} {
		if !sameVerdict(t, formats[i], data) {
			t.Errorf("%s: the one pass does not accept the generated file", formats[i].name)
		}
	}
}

// FuzzValidate: the one pass never accepts what the full parser refuses
// and gives its facts; Validate answers as Parse does.
func FuzzValidate(f *testing.F) {
	addSeeds(f)
	f.Add([]byte(readSeed(f, "progress.json")))
	f.Add([]byte(readSeed(f, "reviews.json")))
	f.Add([]byte(`{"reviews": [{"review_id": 2, "verdict": "pass", "issues": {"major": []}}], "fixes": [{"fix_id": 1, "review_id": 2, "merged_to_main": false}]}`))
	f.Add([]byte(`{"status": {"current_phase": "REVIEW"}, "sessions": [{"session_id": 2, "outcome": "SUCCESS"}, {"session_id": 1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, fm := range formats {
			sameVerdict(t, fm, data)
		}
	})
}

// Strings are scanned eight bytes at a time: a quote, a backslash or a
// control character at any position of a string of any length is found
// as encoding/json finds it.
func TestCheckStringsWordByWord(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for at := 0; at < n; at++ {
			for _, c := range []byte{'"', '\\', 0x00, 0x1f, ' ', 0x7f, '!', '#', '[', ']'} {
				s := []byte(strings.Repeat("a", n))
				s[at] = c
				data := append(append([]byte(`{"k": "`), s...), `", "m": 1}`...)
				if got, want := jsondoc.Check(data) == nil, strictValid(data); got != want {
					t.Fatalf("Check(%q) accepts = %v, want %v", data, got, want)
				}
			}
		}
	}
}

// Files built from the formats' own members, each value drawn from every
// type and form the one pass tells apart (and some it leaves to the full
// parser): the one pass and the full parser agree on thousands of them.
func TestValidateRandomFiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	values := append(append([]string{}, replacements...), `"READY_FOR_REVIEW"`, `"needs_fix"`, `"APPROVED"`, `"Request_Changes"`,
		`"PASS "`, `"\t"`, `{"a": [1, {"b": null}]}`, `[{"x": 1}]`, `false`, `-0`, `1E2`, `"é"`, `"\u00e9"`)
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	members := map[string][]string{
		"progress": {"project", "status", "name", "created_at", "total_features", "updated_at", "features_completed", "current_phase",
			"current_feature", "head_commit", "agent_type", "summary", "outcome", "commits", "commit_range", "features_touched", "extra"},
		"reviews": {"schema_version", "feature_id", "branch", "verdict", "issues", "critical", "major", "suggestions", "commit_range",
			"merge_commit", "review_id", "issues_fixed", "merged_to_main", "pending_review", "extra"},
	}
	member := func(name string) string {
		v := pick(values)
		if r.IntN(4) == 0 {
			v = `{"` + pick(members[name]) + `": ` + pick(values) + "}"
		}
		return `"` + pick(members[name]) + `": ` + v
	}
	object := func(name string, n int, first ...string) string {
		for range n {
			first = append(first, member(name))
		}
		return "{" + strings.Join(first, ", ") + "}"
	}
	records := func(name, id string, n int) string {
		var recs []string
		for i := range n {
			var idm []string
			if r.IntN(8) != 0 {
				idv := strconv.Itoa(i + 1 + r.IntN(2))
				if r.IntN(10) == 0 {
					idv = pick(values)
				}
				idm = append(idm, `"`+id+`": `+idv)
			}
			recs = append(recs, object(name, r.IntN(4), idm...))
		}
		return "[" + strings.Join(recs, ",\n    ") + "]"
	}
	accepted := [2]int{}
	for range 3000 {
		top := func(members ...string) string { // a top-level member is now and then dropped or any value
			var out []string
			for i := 0; i < len(members); i += 2 {
				switch r.IntN(12) {
				case 0:
				case 1:
					out = append(out, `"`+members[i]+`": `+pick(values))
				default:
					out = append(out, `"`+members[i]+`": `+members[i+1])
				}
			}
			return "{" + strings.Join(out, ", ") + "}"
		}
		prog := top("project", object("progress", r.IntN(3)), "status", object("progress", r.IntN(4)), "sessions", records("progress", "session_id", r.IntN(4)))
		rev := top("schema_version", `"1.0"`, "reviews", records("reviews", "review_id", r.IntN(4)), "fixes", records("reviews", "fix_id", r.IntN(3)))
		for i, data := range []string{prog, rev} {
			if sameVerdict(t, formats[i], []byte(data)) {
				accepted[i]++
			}
		}
	}
	if accepted[0] == 0 || accepted[1] == 0 || accepted[0] == 3000 || accepted[1] == 3000 {
		t.Errorf("accepted %v of 3000 each: the files do not exercise both verdicts", accepted)
	}
	t.Logf("accepted by the one pass: %v of 3000 each", accepted)
}

// The fuzz corpora the packages keep (the cases fuzzing once found) are
// answered by the one pass as by the full parser, in both formats.
func TestValidateFuzzCorpora(t *testing.T) {
	files, err := filepath.Glob("../*/testdata/fuzz/*/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	seen := 0
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			lit, ok := strings.CutPrefix(line, "[]byte(")
			if !ok {
				continue
			}
			data, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, f := range formats {
				sameVerdict(t, f, []byte(data))
			}
			seen++
		}
	}
	if seen < len(files) {
		t.Errorf("%d inputs read from %d corpus files", seen, len(files))
	}
}
