package progress_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
)

// seedProgress is the progress.json example of the seed schema, verbatim
// (shared by the packages' tests in testdata/seed).
var seedProgress = func() string {
	b, err := os.ReadFile("../../testdata/seed/progress.json")
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}()

func mustParse(t *testing.T, data string) *progress.File {
	t.Helper()
	f, err := progress.Parse([]byte(data))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

func TestParseSeed(t *testing.T) {
	f := mustParse(t, seedProgress)
	if f.Len() != 2 || f.NextSessionID() != 3 {
		t.Errorf("Len %d NextSessionID %d, want 2 and 3", f.Len(), f.NextSessionID())
	}
	// an untouched file is written in its own order, every member as it was
	got := f.Bytes()
	if !jsonEqual(t, got, []byte(seedProgress)) || string(mustParse(t, string(got)).Bytes()) != string(got) {
		t.Errorf("untouched seed changed on encoding:\n%s", got)
	}
	if i, j, k := bytes.Index(got, []byte(`"project"`)), bytes.Index(got, []byte(`"status"`)), bytes.Index(got, []byte(`"sessions"`)); !(i < j && j < k) {
		t.Errorf("member order:\n%s", got)
	}
	p, err := f.Project()
	if err != nil || p.Name != "Project Name" || p.TotalFeatures != 50 || p.CreatedAt != "2025-01-29T10:00:00Z" {
		t.Errorf("Project = %+v, %v", p, err)
	}
	st, err := f.Status()
	if err != nil || st.FeaturesCompleted != 15 || st.FeaturesPassing != 12 || st.CurrentPhase != "IMPLEMENT" ||
		st.CurrentFeature == nil || *st.CurrentFeature != "F016" || st.HeadCommit == nil || *st.HeadCommit != "abc1234" {
		t.Errorf("Status = %+v, %v", st, err)
	}
	last, err := f.SessionRaw(-1)
	if err != nil || gjson.GetBytes(last, "commit_range.to").String() != "h7i8j9k" {
		t.Errorf("SessionRaw(-1) = %s, %v", last, err)
	}
	first, err := f.SessionRaw(1)
	if err != nil || gjson.GetBytes(first, "agent_type").String() != "INITIALIZER" {
		t.Errorf("SessionRaw(1) = %s, %v", first, err)
	}
	if _, err := f.SessionRaw(7); errs.KindOf(err) != errs.NotFound || !strings.Contains(err.Error(), "Session 7 not found") {
		t.Errorf("SessionRaw(7) = %v, want NotFound", err)
	}
	var ids []int64
	f.Sessions(func(raw []byte) { ids = append(ids, gjson.GetBytes(raw, "session_id").Int()) })
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
		t.Errorf("Sessions visited %v", ids)
	}
}

func TestParseMinimalFiles(t *testing.T) {
	for _, in := range []string{`{"status": {}, "sessions": []}`, `{"project": {}, "status": {"x": 1}, "sessions": []}`} {
		f := mustParse(t, in)
		if f.NextSessionID() != 1 || f.Len() != 0 {
			t.Errorf("%s: NextSessionID %d Len %d", in, f.NextSessionID(), f.Len())
		}
		if _, err := f.SessionRaw(-1); errs.KindOf(err) != errs.NotFound {
			t.Errorf("%s: SessionRaw(-1) on no sessions = %v, want NotFound", in, err)
		}
		out := f.Bytes()
		if !json.Valid(out) || !bytes.Equal(mustParse(t, string(out)).Bytes(), out) {
			t.Errorf("%s: encoding is not valid or not stable:\n%s", in, out)
		}
	}
}

// second is the marker that begins the offending record in the cases below.
const second = `{"m": "second"`

func TestParseRejects(t *testing.T) {
	two := func(id string) string {
		return "{\n  \"sessions\": [\n    {\"session_id\": 1, \"m\": \"first\"},\n    " + second + ", \"session_id\": " + id + "}\n  ]\n}"
	}
	tests := []struct {
		name     string
		in       string
		path     string
		msg      string
		atSecond bool // the offset is that of the second record
	}{
		{"not JSON", "{\n  \"sessions\": [,]\n}", "", "invalid character", false},
		{"top is an array", `[{"session_id": 1}]`, "", "one JSON object", false},
		{"top is a string", `"progress"`, "", "one JSON object", false},
		{"sessions is an object", `{"sessions": {"session_id": 1}}`, "sessions", "array", false},
		{"sessions is null", `{"sessions": null}`, "sessions", "array", false},
		{"project not an object", `{"project": [1]}`, "project", "object", false},
		{"status not an object", `{"status": "IMPLEMENT"}`, "status", "object", false},
		{"session not an object", "{\"sessions\": [{\"session_id\": 1}, 7]}", "sessions[1]", "object", false},
		{"string id", two(`"2"`), "sessions[1].session_id", `"2"`, true},
		{"zero id", two(`0`), "sessions[1].session_id", "positive whole number", true},
		{"negative id", two(`-3`), "sessions[1].session_id", "positive whole number", true},
		{"float id", two(`2.5`), "sessions[1].session_id", "2.5", true},
		{"null id", two(`null`), "sessions[1].session_id", "null", true},
		{"bool id", two(`true`), "sessions[1].session_id", "true", true},
		{"huge id", two(`1e300`), "sessions[1].session_id", "positive whole number", true},
		{"duplicate id", two(`1`), "sessions[1].session_id", "duplicate session id 1", true},
		{"missing id", "{\"sessions\": [{\"session_id\": 1}, " + second + "}]}", "sessions[1].session_id", "found nothing", true},
		{"outcome not one of them", "{\"sessions\": [{\"session_id\": 1}, {\"session_id\": 2, \"outcome\": \"BOGUS\"}]}", "sessions[1].outcome", "is not one of", false},
		{"summary not a string", "{\"sessions\": [{\"session_id\": 1, \"summary\": 3}]}", "sessions[0].summary", "must be a string", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := progress.Parse([]byte(tt.in))
			var ie *jsondoc.InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("Parse = %v (%T), want *jsondoc.InvalidError", err, err)
			}
			if ie.Path != tt.path {
				t.Errorf("Path = %q, want %q", ie.Path, tt.path)
			}
			if !strings.Contains(ie.Msg, tt.msg) {
				t.Errorf("Msg = %q, want it to mention %q", ie.Msg, tt.msg)
			}
			if tt.atSecond {
				if want := strings.Index(tt.in, second); ie.Offset != want {
					line, col := jsondoc.Position([]byte(tt.in), ie.Offset)
					t.Errorf("Offset = %d (line %d, column %d), want %d: the start of the offending record", ie.Offset, line, col, want)
				}
			}
			if ie.Offset < 0 || ie.Offset > len(tt.in) {
				t.Errorf("Offset %d outside the input", ie.Offset)
			}
		})
	}
}

// The offset of a bad record lets a caller say where it is.
func TestParseRejectPosition(t *testing.T) {
	in := []byte(strings.Replace(seedProgress, `"session_id": 2`, `"session_id": "two"`, 1))
	_, err := progress.Parse(in)
	var ie *jsondoc.InvalidError
	if !errors.As(err, &ie) {
		t.Fatalf("Parse = %v", err)
	}
	if line, col := jsondoc.Position(in, ie.Offset); line != 32 || col != 5 {
		t.Errorf("bad session at line %d, column %d, want 32:5 (the record's opening brace)", line, col)
	}
	if ie.Path != "sessions[1].session_id" {
		t.Errorf("Path = %q", ie.Path)
	}
}

func TestNextSessionIDIsMaxPlusOne(t *testing.T) {
	tests := []struct {
		ids  string
		want int
	}{
		{``, 1},
		{`{"session_id": 1}`, 2},
		{`{"session_id": 3}, {"session_id": 1}, {"session_id": 7}, {"session_id": 2}`, 8},
		{`{"session_id": 10}, {"session_id": 4}`, 11},
		{`{"session_id": 5.0}`, 6},
	}
	for _, tt := range tests {
		f := mustParse(t, `{"status": {}, "sessions": [`+tt.ids+`]}`)
		if got := f.NextSessionID(); got != tt.want {
			t.Errorf("sessions [%s]: NextSessionID = %d, want %d", tt.ids, got, tt.want)
		}
	}
}

func TestAddSessionAssignsIDs(t *testing.T) {
	f := mustParse(t, `{"x": "keep", "status": {}, "sessions": [{"session_id": 4, "extra": [1,2]}, {"session_id": 2}]}`)
	s, err := f.AddSession(progress.Session{SessionID: 99, AgentType: "IMPLEMENT", Summary: "did it", Outcome: "READY_FOR_REVIEW"})
	if err != nil {
		t.Fatal(err)
	}
	if s.SessionID != 5 {
		t.Errorf("first added session id = %d, want 5 (the caller's 99 is ignored)", s.SessionID)
	}
	if s.FeaturesTouched == nil || s.Commits == nil {
		t.Error("nil lists are not made empty")
	}
	s2, err := f.AddSession(progress.Session{AgentType: "REVIEW", Outcome: "ERROR"})
	if err != nil || s2.SessionID != 6 || f.NextSessionID() != 7 || f.Len() != 4 {
		t.Fatalf("second add: id %d, next %d, len %d, %v", s2.SessionID, f.NextSessionID(), f.Len(), err)
	}
	out := f.Bytes()
	g := mustParse(t, string(out))
	if g.NextSessionID() != 7 || g.Len() != 4 {
		t.Errorf("re-read: next %d, len %d", g.NextSessionID(), g.Len())
	}
	raw, err := g.SessionRaw(5)
	if err != nil {
		t.Fatal(err)
	}
	r := gjson.ParseBytes(raw)
	if r.Get("summary").String() != "did it" || !r.Get("features_touched").IsArray() || !r.Get("commits").IsArray() || r.Get("commit_range").Exists() {
		t.Errorf("stored session = %s", raw)
	}
	for _, keep := range []string{`"x": "keep"`, `"extra": [1,2]`} {
		if !bytes.Contains(out, []byte(keep)) {
			t.Errorf("lost %s:\n%s", keep, out)
		}
	}
	if !bytes.Equal(g.Bytes(), out) {
		t.Error("re-encoding is not stable")
	}
}

// A file whose last session id is the largest one accepted must not hand
// out an id that overflows or that Parse then refuses: either the id is
// refused when read, or AddSession refuses, or the result reads back.
func TestAddSessionAfterLargestID(t *testing.T) {
	for _, id := range []string{"9223372036854775807", fmt.Sprint(jsondoc.MaxID)} {
		f, err := progress.Parse([]byte(`{"status": {}, "sessions": [{"session_id": ` + id + `}]}`))
		if err != nil {
			continue // refusing such an id is fine
		}
		if next := f.NextSessionID(); next < 1 {
			t.Errorf("NextSessionID = %d after session %s", next, id)
		}
		if _, err := f.AddSession(progress.Session{AgentType: "IMPLEMENT"}); err != nil {
			continue // refusing to add is fine
		}
		if _, err := progress.Parse(f.Bytes()); err != nil {
			t.Errorf("after session %s, AddSession produced a file Parse rejects: %v", id, err)
		}
	}
}

func TestNew(t *testing.T) {
	head := "abc1234"
	f := progress.New("Demo", 4, "2025-01-29T10:00:00Z", &head)
	if f.NextSessionID() != 1 || f.Len() != 0 {
		t.Errorf("NextSessionID %d Len %d", f.NextSessionID(), f.Len())
	}
	out := f.Bytes()
	g := mustParse(t, string(out))
	st, _ := g.Status()
	p, _ := g.Project()
	if p.Name != "Demo" || p.TotalFeatures != 4 || st.CurrentPhase != "IMPLEMENT" || st.HeadCommit == nil || *st.HeadCommit != head || st.UpdatedAt != "2025-01-29T10:00:00Z" {
		t.Errorf("project %+v status %+v", p, st)
	}
	if st.CurrentFeature != nil || !strings.Contains(string(out), `"current_branch": null`) {
		t.Errorf("nulls not written as null:\n%s", out)
	}
	// the seed's order: the project, the status, the sessions
	if i, j, k := bytes.Index(out, []byte(`"project"`)), bytes.Index(out, []byte(`"status"`)), bytes.Index(out, []byte(`"sessions"`)); !(i < j && j < k) {
		t.Errorf("member order:\n%s", out)
	}
}

func TestSetCounters(t *testing.T) {
	f := mustParse(t, seedProgress)
	if err := f.SetCounters(progress.Counters{TotalFeatures: 60, FeaturesPassing: 20, FeaturesCompleted: 18}); err != nil {
		t.Fatal(err)
	}
	out := f.Bytes()
	r := gjson.ParseBytes(out)
	if r.Get("status.features_completed").Int() != 18 || r.Get("status.features_passing").Int() != 20 || r.Get("project.total_features").Int() != 60 {
		t.Errorf("counters not set:\n%s", out)
	}
	if r.Get("project.name").String() != "Project Name" || r.Get("status.head_commit").String() != "abc1234" || r.Get("sessions.#").Int() != 2 {
		t.Errorf("other fields lost:\n%s", out)
	}
	// In place: the status keeps its member order.
	want := strings.Replace(strings.Replace(strings.Replace(strings.TrimSuffix(string(mustParse(t, seedProgress).Bytes()), "\n"),
		`"features_completed": 15`, `"features_completed": 18`, 1),
		`"features_passing": 12`, `"features_passing": 20`, 1),
		`"total_features": 50`, `"total_features": 60`, 1) + "\n"
	if string(out) != want {
		t.Errorf("SetCounters changed more than the three numbers:\n%s", out)
	}

	g := mustParse(t, `{"status": {"x": 1}, "sessions": []}`)
	if err := g.SetCounters(progress.Counters{TotalFeatures: 3, FeaturesPassing: 1, FeaturesCompleted: 1}); err != nil {
		t.Fatal(err)
	}
	r = gjson.ParseBytes(g.Bytes())
	if r.Get("project.total_features").Int() != 3 || r.Get("status.x").Int() != 1 || r.Get("status.features_passing").Int() != 1 {
		t.Errorf("without a project:\n%s", g.Bytes())
	}
}

func TestSetStatus(t *testing.T) {
	f := mustParse(t, seedProgress)
	if err := f.SetStatus("current_branch", (*string)(nil)); err != nil {
		t.Fatal(err)
	}
	if err := f.SetStatus("new_field", "v"); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Status()
	if st.CurrentBranch != nil {
		t.Errorf("current_branch = %q, want null", *st.CurrentBranch)
	}
	r := gjson.ParseBytes(f.StatusRaw())
	if r.Get("new_field").String() != "v" || r.Get("head_commit").String() != "abc1234" {
		t.Errorf("status = %s", f.StatusRaw())
	}
	if !strings.Contains(string(f.Bytes()), "\"current_branch\": null,\n") {
		t.Errorf("current_branch not replaced in place:\n%s", f.Bytes())
	}
}

func TestNullable(t *testing.T) {
	for _, in := range []string{"", "null"} {
		if got := progress.Nullable(in); got != nil {
			t.Errorf("Nullable(%q) = %q, want nil", in, *got)
		}
	}
	for _, in := range []string{"F001", "NULL", "Null", " ", "none"} {
		if got := progress.Nullable(in); got == nil || *got != in {
			t.Errorf("Nullable(%q) = %v, want the string", in, got)
		}
	}
}

func TestNormalizeOutcome(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SUCCESS", "SUCCESS"},
		{"success", "SUCCESS"},
		{" ready_for_review ", "READY_FOR_REVIEW"},
		{"NEEDS_FIX", "NEEDS_FIX"},
		{"REJECTED", "REJECTED"},
		{"ERROR", "ERROR"},
		{"APPROVED", "SUCCESS"},
		{"approve", "SUCCESS"},
		{"PASS", "SUCCESS"},
		{"REQUEST_CHANGES", "NEEDS_FIX"},
		{"pass_with_comments", "NEEDS_FIX"},
		{"REJECT", "REJECTED"},
		{"reject", "REJECTED"},
	}
	for _, tt := range tests {
		got, err := progress.NormalizeOutcome(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("NormalizeOutcome(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "DONE", "FAILED", "SUCCES", "ready for review"} {
		got, err := progress.NormalizeOutcome(bad)
		if err == nil {
			t.Errorf("NormalizeOutcome(%q) = %q, want an error", bad, got)
			continue
		}
		if errs.KindOf(err) != errs.Usage || errs.Code(err) != errs.ExitUsage {
			t.Errorf("NormalizeOutcome(%q): kind %v, want usage", bad, errs.KindOf(err))
		}
		if !strings.Contains(err.Error(), "--outcome") || !strings.Contains(err.Error(), "READY_FOR_REVIEW") {
			t.Errorf("NormalizeOutcome(%q) message %q does not name the flag and the choices", bad, err)
		}
	}
}

func TestChoose(t *testing.T) {
	got, err := progress.Choose("--phase", "review", progress.Phases, nil)
	if err != nil || got != "REVIEW" {
		t.Errorf("Choose(review) = %q, %v", got, err)
	}
	if _, err := progress.Choose("--phase", "nope", progress.Phases, nil); !errs.Is(err, errs.Usage) || !strings.Contains(err.Error(), "--phase") {
		t.Errorf("Choose(nope) = %v", err)
	}
}

func TestReviewType(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		branch *string
		want   string
	}{
		{nil, "FEATURE"},
		{s("feature/login"), "FEATURE"},
		{s("refactor/arch-review-2"), "ARCHITECTURE_REFACTOR"},
		{s("refactor/"), "ARCHITECTURE_REFACTOR"},
		{s("refactor"), "FEATURE"},
		{s("feature/refactor/x"), "FEATURE"},
		{s(""), "FEATURE"},
	}
	debt := "DEBT-001,DEBT-002"
	if got := progress.ReviewType(progress.Status{CurrentBranch: s("refactor/tech-debt-7"), CurrentFeature: &debt}); got != "FEATURE" {
		t.Errorf("a debt batch on its refactor branch is reviewed as its items, got %s", got)
	}
	for _, tt := range tests {
		if got := progress.ReviewType(progress.Status{CurrentBranch: tt.branch}); got != tt.want {
			b := "<nil>"
			if tt.branch != nil {
				b = *tt.branch
			}
			t.Errorf("ReviewType(branch %q) = %s, want %s", b, got, tt.want)
		}
	}
}

// jsonEqual says whether two documents hold the same JSON value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}
