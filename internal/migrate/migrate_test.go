package migrate

import (
	"strconv"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/workflow"
)

// progressJSON is a predecessor's progress.json: isoformat times, the
// counters its agents typed in, and the recorded status.
func progressJSON(phase, feature, branch string) string {
	return `{
  "project": {"name": "Shop", "created_at": "2025-01-29T10:00:00.123456+00:00", "total_features": 6},
  "status": {"updated_at": "2025-01-29T12:00:00.000001+00:00", "features_completed": 6, "features_passing": 5,
    "current_phase": "` + phase + `", "current_feature": ` + feature + `, "current_branch": ` + branch + `, "head_commit": "7902799"},
  "sessions": [
    {"session_id": 1, "agent_type": "INITIALIZER", "started_at": "2025-01-29T10:00:00+00:00", "completed_at": "2025-01-29T10:05:00.5+00:00",
     "summary": "feature list written", "features_touched": [], "outcome": "SUCCESS", "commits": [], "commit_range": {"from": null, "to": "6014957"}},
    {"session_id": 2, "agent_type": "IMPLEMENT", "started_at": "2025-01-29T10:10:00+00:00", "completed_at": "2025-01-29T10:20:00+00:00",
     "summary": "implemented F004", "features_touched": ["F004"], "outcome": "READY_FOR_REVIEW",
     "commits": [{"hash": "2a9724b", "message": "implement F004"}], "commit_range": {"from": null, "to": "2a9724b"}},
    {"session_id": 3, "agent_type": "FIX", "started_at": "2025-01-29T10:40:00+00:00", "completed_at": "2025-01-29T10:50:00+00:00",
     "summary": "fixed R2-M1", "features_touched": ["F004"], "outcome": "READY_FOR_REVIEW", "commits": [], "commit_range": {"from": null, "to": "null"}}
  ]
}`
}

const reviewsJSON = `{
  "schema_version": "1.0",
  "reviews": [
    {"review_id": 1, "agent_type": "REVIEW", "feature_id": "F001", "branch": "feature/F001", "timestamp": "2025-01-29T09:00:00+00:00",
     "verdict": "APPROVE", "issues": [], "summary": "ok", "commit_range": {"from": null, "to": "76dcf18"}},
    {"review_id": 2, "agent_type": "REVIEW", "feature_id": "F004", "branch": "feature/F004", "timestamp": "2025-01-29T10:30:00+00:00",
     "verdict": "REQUEST_CHANGES", "issues": [{"id": "R2-M1", "severity": "major", "description": "no error handling"}],
     "summary": "missing error handling", "commit_range": {"from": null, "to": "2a9724b"}},
    {"review_id": 3, "agent_type": "ARCHITECTURE", "feature_id": null, "branch": "null", "timestamp": "2025-01-29T09:30:00+00:00",
     "verdict": "APPROVE", "issues": [], "summary": "GOOD", "commit_range": {"from": null, "to": null}}
  ],
  "fixes": [
    {"fix_id": 1, "review_id": 2, "feature_id": "F004", "branch": "feature/F004", "agent_type": "FIX", "timestamp": "2025-01-29T10:45:00+00:00",
     "issues_fixed": [{"issue_id": "R2-M1", "commit": "abc1234"}], "issues_deferred": [], "tests_added": [], "merged_to_main": false, "pending_review": true}
  ]
}`

const featuresJSON = `{"features": [
  {"id": "F001", "name": "Health", "passes": true},
  {"id": "F002", "name": "Login", "passes": true},
  {"id": "F003", "name": "Cart", "passes": false},
  {"id": "F004", "name": "Checkout", "passes": false},
  {"id": "DEBT-001", "name": "a", "type": "tech_debt", "passes": false},
  {"id": "DEBT-002", "name": "b", "type": "tech_debt", "passes": false}
]}`

func input(t *testing.T, prog string) Input {
	t.Helper()
	p, err := progress.Parse([]byte(prog))
	if err != nil {
		t.Fatal(err)
	}
	r, err := reviews.Parse([]byte(reviewsJSON))
	if err != nil {
		t.Fatal(err)
	}
	f, err := features.Parse([]byte(featuresJSON))
	if err != nil {
		t.Fatal(err)
	}
	next := workflow.NextWork(workflow.Situation{Limits: workflow.DefaultLimits, Backlog: workflow.Backlog{Debt: []string{"DEBT-001", "DEBT-002"}, Features: []string{"F003", "F004"}}})
	return Input{Progress: p, Reviews: r, Features: f, Limits: workflow.DefaultLimits, NextWork: next,
		Counters: progress.Counters{TotalFeatures: 6, FeaturesPassing: 2, FeaturesCompleted: 1},
		Raw:      map[string][]byte{"progress.json": []byte(prog), "reviews.json": []byte(reviewsJSON), "features.json": []byte(featuresJSON)}}
}

func TestAdoptStatus(t *testing.T) {
	for _, c := range []struct {
		name, phase, feature, branch string
		want                         string // phase feature branch rule
	}{
		{"a pending re-review stays a re-review", "REVIEW", `"F004"`, `"feature/F004"`, "REVIEW F004 feature/F004 adopted"},
		{"a pending fix stays a fix", "FIX", `"F004"`, `"feature/F004"`, "FIX F004 feature/F004 adopted"},
		{"the null string means no branch", "REVIEW", `"F004"`, `"null"`, "REVIEW F004 - adopted"},
		{"an architecture refactor under review, no feature", "REVIEW", `null`, `"refactor/arch-review-3"`, "REVIEW - refactor/arch-review-3 adopted"},
		{"an architecture review is kept", "ARCHITECTURE", `null`, `null`, "ARCHITECTURE - - adopted"},
		{"a work item that passes is over", "REVIEW", `"F001"`, `"feature/F001"`, "IMPLEMENT F003 - adopted/recomputed"},
		{"IMPLEMENT of nothing is the next work", "IMPLEMENT", `null`, `"null"`, "IMPLEMENT F003 - adopted/recomputed"},
		{"IMPLEMENT of a pending feature stays", "IMPLEMENT", `"F004"`, `null`, "IMPLEMENT F004 - adopted"},
		{"REVIEW of nothing is recomputed", "REVIEW", `"null"`, `"null"`, "IMPLEMENT F003 - adopted/recomputed"},
		{"DONE with work pending is recomputed", "DONE", `null`, `null`, "IMPLEMENT F003 - adopted/recomputed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Adopt(input(t, progressJSON(c.phase, c.feature, c.branch)))
			d := p.Decision
			got := strings.Join([]string{d.Phase, orDash(d.Feature), orDash(d.Branch), d.Rule}, " ")
			if got != c.want {
				t.Errorf("got %s, want %s (%s)", got, c.want, d.Reason)
			}
			if d.Reason == "" {
				t.Error("a decision without a reason")
			}
		})
	}
}

func TestAdoptMissingBranch(t *testing.T) {
	exists := func(b string) bool { return b == "feature/F004" }
	for _, c := range []struct {
		phase, feature, branch, want string
	}{
		{"REVIEW", `"F004"`, `"feature/F004"`, "REVIEW adopted"},
		{"REVIEW", `"F004"`, `"feature/gone"`, "IMPLEMENT adopted/recomputed"},
		{"FIX", `"F004"`, `"feature/gone"`, "IMPLEMENT adopted/recomputed"},
		// FIX of an architecture review creates its refactor branch
		{"FIX", `null`, `"refactor/arch-review-3"`, "FIX adopted"},
		{"REVIEW", `null`, `"refactor/arch-review-3"`, "IMPLEMENT adopted/recomputed"},
	} {
		in := input(t, progressJSON(c.phase, c.feature, c.branch))
		in.BranchExists = exists
		d := Adopt(in).Decision
		if got := d.Phase + " " + d.Rule; got != c.want {
			t.Errorf("%s %s %s: got %s, want %s (%s)", c.phase, c.feature, c.branch, got, c.want, d.Reason)
		}
	}
}

func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func TestAdoptChangesAndAnomalies(t *testing.T) {
	in := input(t, progressJSON("REVIEW", `"F004"`, `"null"`))
	in.Tracked = []string{"progress.json", "reviews.json"}
	in.Leftovers = []Leftover{{Path: ".backups/", Files: 12}, {Path: ".agent_state.json"}}
	p := Adopt(in)
	changes := map[string]Change{}
	for _, c := range p.Changes {
		changes[c.Field] = c
	}
	for field, want := range map[string]string{
		"status.features_passing":   "5 → 2",
		"status.features_completed": "6 → 1",
		"status.current_branch":     `"null" → null`,
	} {
		c, ok := changes[field]
		if !ok || c.Old+" → "+c.New != want {
			t.Errorf("%s: got %+v, want %s", field, c, want)
		}
	}
	if n := len(p.Changes); n != len(changes) {
		t.Errorf("a field changed twice: %+v", p.Changes)
	}
	if _, ok := changes["project.total_features"]; ok {
		t.Error("total_features was right and must not be reported")
	}
	kinds := map[string]Anomaly{}
	for _, a := range p.Anomalies {
		if _, dup := kinds[a.Kind]; dup && a.Kind != "null-strings" && a.Kind != "leftover" {
			t.Errorf("%s listed twice", a.Kind)
		}
		kinds[a.Kind] = a
		if a.Do == "" || a.Found == "" {
			t.Errorf("%s: says neither what nor what to do: %+v", a.Kind, a)
		}
	}
	for _, k := range []string{"null-strings", "stale-counters", "tracked", "backups", "leftover", "unreviewed-pass", "abbreviated-hashes"} {
		if _, ok := kinds[k]; !ok {
			t.Errorf("anomaly %s not listed: %+v", k, p.Anomalies)
		}
	}
	if a := kinds["unreviewed-pass"]; !strings.Contains(a.Found, "F002") || strings.Contains(a.Found, "F001") {
		t.Errorf("only F002 passes without a passing review: %s", a.Found)
	}
	if a := kinds["tracked"]; !strings.Contains(a.Do, "run 'baton init' in the main worktree") {
		t.Errorf("tracked: %s", a.Do)
	}
	in.Untracked = []string{"main (1a2b3c4)", "feature/F004 (5d6e7f8)"}
	for _, a := range Adopt(in).Anomalies {
		if a.Kind == "tracked" && (!strings.Contains(a.Found, "main (1a2b3c4), feature/F004 (5d6e7f8)") || !strings.HasPrefix(a.Do, "nothing: ")) {
			t.Errorf("tracked, untracked by init: %+v", a)
		}
	}
	if len(p.Start) != 3 || len(p.Start["progress.json"]) != 64 {
		t.Errorf("start hashes: %v", p.Start)
	}
}

// TestAdoptRecomputedChange: a "null" feature recomputed to the next work
// is one change, from the recorded string to the adopted id.
func TestAdoptRecomputedChange(t *testing.T) {
	p := Adopt(input(t, progressJSON("IMPLEMENT", `"null"`, `""`)))
	var got []string
	for _, c := range p.Changes {
		if strings.HasPrefix(c.Field, "status.current_") {
			got = append(got, c.Field+" "+c.Old+" -> "+c.New)
		}
	}
	want := `status.current_feature "null" -> "F003"|status.current_branch "" -> null`
	if strings.Join(got, "|") != want {
		t.Errorf("got %s, want %s", strings.Join(got, "|"), want)
	}
}

func TestNullStrings(t *testing.T) {
	got := nullStrings([]byte(`{"status": {"current_branch": "null", "current_feature": "F1", "current_phase": "null"},
		"reviews": [{"branch": "null", "feature_id": "", "summary": "null"}, {"branch": "main"}]}`))
	want := "status.current_branch reviews.0.branch reviews.0.feature_id"
	if strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s (summaries and phases are text, not references)", got, want)
	}
}

func TestHistoryOrder(t *testing.T) {
	p := Adopt(input(t, progressJSON("REVIEW", `"F004"`, `"feature/F004"`)))
	var got []string
	for _, e := range p.History {
		got = append(got, e.Kind[:1]+strconv.Itoa(e.ID)+"@"+e.Time[11:16])
	}
	want := "r1@09:00 r3@09:30 s1@10:05 s2@10:20 r2@10:30 f1@10:45 s3@10:50"
	if strings.Join(got, " ") != want {
		t.Errorf("got %s, want %s", strings.Join(got, " "), want)
	}
	for _, e := range p.History {
		if !strings.HasSuffix(e.Time, "Z") || len(e.Time) != len("2025-01-29T10:00:00Z") {
			t.Errorf("%s %d: time %q not in baton's form", e.Kind, e.ID, e.Time)
		}
		if e.Kind == "review" && e.ID == 1 && !strings.Contains(e.Summary, "PASS") {
			t.Errorf("APPROVE is read as PASS: %s", e.Summary)
		}
		if e.Kind == "review" && e.ID == 3 && len(e.Features) != 0 {
			t.Errorf("an architecture review names no feature: %v", e.Features)
		}
		if e.Kind == "session" && e.Session != e.ID {
			t.Errorf("session %d: imported as session %d", e.ID, e.Session)
		}
	}
}

func TestDetect(t *testing.T) {
	if Detect(nil, false) || Detect([]string{"progress.json"}, true) || !Detect([]string{"progress.json"}, false) {
		t.Error("predecessor state: state files and no audit log, nothing else")
	}
}

// TestHistoryUnreadableTime: a record whose time cannot be read keeps its
// place after the record before it in its file, and is dated as that one.
func TestHistoryUnreadableTime(t *testing.T) {
	prog := strings.Replace(progressJSON("REVIEW", `"F004"`, `"feature/F004"`), `"completed_at": "2025-01-29T10:20:00+00:00"`, `"completed_at": "later"`, 1)
	prog = strings.Replace(prog, `"started_at": "2025-01-29T10:10:00+00:00"`, `"started_at": "soon"`, 1)
	p := Adopt(input(t, prog))
	for i, e := range p.History {
		if e.Kind == "session" && e.ID == 2 {
			prev := p.History[i-1]
			if prev.Kind != "session" || prev.ID != 1 || e.Time != prev.Time {
				t.Errorf("session 2 (no readable time) follows %s %d at %s, dated %q", prev.Kind, prev.ID, prev.Time, e.Time)
			}
			return
		}
	}
	t.Error("session 2 not imported")
}
