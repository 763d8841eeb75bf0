package reviews_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
)

// seedReviews is the reviews.json example of the seed schema, verbatim.
const seedReviews = `{
  "schema_version": "1.0",
  "reviews": [
    {
      "review_id": 1,
      "feature_id": "F001",
      "feature_name": "Health Check Endpoint",
      "branch": "feature/health-check",
      "agent_type": "REVIEW",
      "timestamp": "2025-01-29T11:35:00Z",
      "commit_range": {
        "from": "a1b2c3d",
        "to": "h7i8j9k",
        "description": "Reviewing commits from main to feature branch HEAD"
      },
      "verdict": "REQUEST_CHANGES",
      "issues": {
        "critical": [],
        "major": [
          {
            "id": "R1-M1",
            "description": "Missing error handling for database connection failure",
            "location": "backend/app/routes/health.py:15",
            "suggestion": "Add try/except block with proper error response"
          }
        ],
        "minor": [],
        "suggestions": []
      },
      "checklist": {
        "functionality": "PASS",
        "security": "PASS",
        "testing": "FAIL",
        "code_quality": "PASS",
        "error_handling": "PASS",
        "maintainability": "PASS"
      },
      "summary": "Implementation is functional but missing error handling."
    },
    {
      "review_id": 2,
      "feature_id": null,
      "feature_name": "Architecture Review #1",
      "branch": null,
      "agent_type": "ARCHITECTURE",
      "timestamp": "2025-01-29T15:00:00Z",
      "trigger": "Every 5 features",
      "features_completed": 5,
      "verdict": "REQUEST_CHANGES",
      "health_status": "NEEDS_ATTENTION",
      "metrics": {
        "total_files": 45,
        "total_lines": 3200,
        "largest_file": {"path": "backend/app/services/processor.py", "lines": 280},
        "test_coverage_percent": 72
      },
      "issues": {
        "critical": [],
        "major": [
          {
            "id": "A2-M1",
            "description": "processor.py is a God class (280 lines)",
            "location": "backend/app/services/processor.py",
            "suggestion": "Extract validation logic into separate class"
          }
        ],
        "minor": [],
        "suggestions": []
      },
      "checklist": {
        "structure": "FAIL",
        "dependencies": "PASS",
        "security": "PASS",
        "testing": "PASS",
        "code_quality": "FAIL"
      },
      "summary": "Architecture review: NEEDS_ATTENTION. God class detected in processor.py."
    }
  ],
  "fixes": [
    {
      "fix_id": 1,
      "review_id": 1,
      "feature_id": "F001",
      "branch": "feature/health-check",
      "agent_type": "FIX",
      "timestamp": "2025-01-29T12:00:00Z",
      "issues_fixed": [
        {
          "issue_id": "R1-M1",
          "fix_description": "Added try/except with 503 response on DB failure",
          "commit": "abc123"
        }
      ],
      "issues_deferred": [],
      "tests_added": ["test_health_db_failure"],
      "merged_to_main": false,
      "pending_review": true
    },
    {
      "fix_id": 2,
      "review_id": 2,
      "feature_id": null,
      "branch": "refactor/arch-review-2",
      "agent_type": "FIX",
      "timestamp": "2025-01-29T16:00:00Z",
      "issues_fixed": [
        {
          "issue_id": "A2-M1",
          "fix_description": "Extracted ValidationService from processor.py",
          "commit": "def456"
        }
      ],
      "issues_deferred": [],
      "tests_added": [],
      "merged_to_main": false,
      "pending_review": true
    }
  ]
}`

func mustParse(t *testing.T, data string) *reviews.File {
	t.Helper()
	f, err := reviews.Parse([]byte(data))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

func sp(s string) *string { return &s }

func TestParseSeed(t *testing.T) {
	f := mustParse(t, seedReviews)
	if f.NextReviewID() != 3 || f.NextFixID() != 3 || len(f.Reviews()) != 2 || len(f.Fixes()) != 2 {
		t.Errorf("next review %d, next fix %d, %d reviews, %d fixes", f.NextReviewID(), f.NextFixID(), len(f.Reviews()), len(f.Fixes()))
	}
	if got := string(f.Bytes()); got != seedReviews+"\n" {
		t.Errorf("untouched seed changed on encoding:\n%s", got)
	}
	r, err := f.Review(2)
	if err != nil || r.Get("agent_type").String() != "ARCHITECTURE" || r.Get("metrics.largest_file.lines").Int() != 280 {
		t.Errorf("Review(2) = %s, %v", r.Raw, err)
	}
	if _, err := f.Review(9); errs.KindOf(err) != errs.NotFound || !strings.Contains(err.Error(), "R9") {
		t.Errorf("Review(9) = %v, want NotFound naming R9", err)
	}
	last, err := f.Last()
	if err != nil || last.Get("review_id").Int() != 2 {
		t.Errorf("Last = %s, %v", last.Raw, err)
	}
	if got := reviews.ListLine(f.Reviews()[0]); got != "  R1: [REVIEW] F001 - REQUEST_CHANGES (1 issues)" {
		t.Errorf("ListLine = %q", got)
	}
	if got := reviews.ListLine(f.Reviews()[1]); got != "  R2: [ARCHITECTURE] ARCHITECTURE - REQUEST_CHANGES (1 issues)" {
		t.Errorf("ListLine = %q", got)
	}
	merged := mustParse(t, `{"reviews": [{"review_id": 8, "agent_type": "REVIEW", "feature_id": "F002", "verdict": "PASS_WITH_COMMENTS", "issues": [],
		"decision": {"rule": "limit/merge-with-debt", "merge": true}, "merge_commit": "abc1234"},
		{"review_id": 9, "agent_type": "REVIEW", "feature_id": "F003", "verdict": "REJECT", "issues": [], "rejected_at": "2025-01-29T10:00:00Z"},
		{"review_id": 10, "agent_type": "REVIEW", "feature_id": "F004", "verdict": "PASS", "issues": [], "merge_commit": "def5678"}]}`)
	for i, want := range []string{
		"  R8: [REVIEW] F002 - PASS_WITH_COMMENTS (0 issues) - merged as abc1234 by the decision limit/merge-with-debt",
		"  R9: [REVIEW] F003 - REJECT (0 issues) - rejected",
		"  R10: [REVIEW] F004 - PASS (0 issues) - merged as def5678",
	} {
		if got := reviews.ListLine(merged.Reviews()[i]); got != want {
			t.Errorf("ListLine = %q, want %q", got, want)
		}
	}
	if got := reviews.FixListLine(f.Fixes()[0]); got != "  FIX-1: addresses R1 for F001 - 1 fixed, 0 deferred [PENDING]" {
		t.Errorf("FixListLine = %q", got)
	}
}

func TestNewFile(t *testing.T) {
	f := reviews.New()
	want := "{\n  \"schema_version\": \"1.0\",\n  \"reviews\": [],\n  \"fixes\": []\n}\n"
	if got := string(f.Bytes()); got != want {
		t.Errorf("New().Bytes() = %q, want %q", got, want)
	}
	if f.NextReviewID() != 1 || f.NextFixID() != 1 {
		t.Errorf("next ids %d %d", f.NextReviewID(), f.NextFixID())
	}
	if _, err := f.Last(); errs.KindOf(err) != errs.NotFound {
		t.Errorf("Last on an empty file = %v, want NotFound", err)
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, in, path string
	}{
		{"not JSON", `{"reviews": [}`, ""},
		{"top array", `[]`, ""},
		{"reviews not array", `{"reviews": {}}`, "reviews"},
		{"fixes not array", `{"fixes": "none"}`, "fixes"},
		{"review not object", `{"reviews": [[]]}`, "reviews[0]"},
		{"review id string", `{"reviews": [{"review_id": 1}, {"review_id": "2"}]}`, "reviews[1].review_id"},
		{"review id zero", `{"reviews": [{"review_id": 0}]}`, "reviews[0].review_id"},
		{"review id float", `{"reviews": [{"review_id": 1.5}]}`, "reviews[0].review_id"},
		{"review id missing", `{"reviews": [{"verdict": "PASS"}]}`, "reviews[0].review_id"},
		{"review id duplicate", `{"reviews": [{"review_id": 3}, {"review_id": 3}]}`, "reviews[1].review_id"},
		{"fix id duplicate", `{"reviews": [], "fixes": [{"fix_id": 1}, {"fix_id": 2}, {"fix_id": 1}]}`, "fixes[2].fix_id"},
		{"fix id negative", `{"fixes": [{"fix_id": -1}]}`, "fixes[0].fix_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := reviews.Parse([]byte(tt.in))
			var ie *jsondoc.InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("Parse = %v (%T), want *jsondoc.InvalidError", err, err)
			}
			if ie.Path != tt.path {
				t.Errorf("Path = %q, want %q (%v)", ie.Path, tt.path, err)
			}
		})
	}
	// The offset names the offending record.
	in := "{\n  \"reviews\": [\n    {\"review_id\": 1},\n    {\"review_id\": 1}\n  ]\n}"
	_, err := reviews.Parse([]byte(in))
	var ie *jsondoc.InvalidError
	if !errors.As(err, &ie) {
		t.Fatal(err)
	}
	if line, col := jsondoc.Position([]byte(in), ie.Offset); line != 4 || col != 5 {
		t.Errorf("duplicate review at line %d, column %d, want 4:5", line, col)
	}
}

func TestParseMissingArrays(t *testing.T) {
	if _, err := reviews.Parse([]byte(`{"schema_version": "1.0"}`)); err == nil || !strings.Contains(err.Error(), "reviews: missing") {
		t.Errorf("a file without its reviews array = %v, want refused (ids would restart at 1)", err)
	}
	f := mustParse(t, `{"schema_version": "1.0", "reviews": []}`)
	if f.NextReviewID() != 1 || f.NextFixID() != 1 {
		t.Errorf("next ids %d %d", f.NextReviewID(), f.NextFixID())
	}
	out := f.Bytes()
	if !gjson.GetBytes(out, "reviews").IsArray() || !gjson.GetBytes(out, "fixes").IsArray() {
		t.Errorf("arrays not added:\n%s", out)
	}
}

func TestAddReview(t *testing.T) {
	f := mustParse(t, seedReviews)
	issues, err := reviews.ParseIssues("--issues", []byte(`{"major": [{"description": "no tests"}], "minor": [{"description": "naming"}, {"description": "typo"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rv, err := f.AddReview(reviews.NewReview{
		AgentType: "REVIEW", FeatureID: sp("F002"), Branch: sp("feature/x"), Verdict: "REQUEST_CHANGES",
		Summary: "s", Issues: issues, Timestamp: "2025-01-30T10:00:00Z",
		CommitRange: &progress.Range{From: sp("a"), To: sp("b"), Description: "d"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rv.ReviewID != 3 || f.NextReviewID() != 4 {
		t.Errorf("review id %d, next %d", rv.ReviewID, f.NextReviewID())
	}
	out := f.Bytes()
	g := mustParse(t, string(out))
	r, err := g.Review(3)
	if err != nil {
		t.Fatal(err)
	}
	ids := idsOf(reviews.ReadIssues(r.Get("issues")))
	if strings.Join(ids, ",") != "R3-M1,R3-m1,R3-m2" {
		t.Errorf("issue ids = %v", ids)
	}
	if r.Get("feature_id").String() != "F002" || r.Get("commit_range.description").String() != "d" || r.Get("verdict").String() != "REQUEST_CHANGES" {
		t.Errorf("stored review = %s", r.Raw)
	}
	if !bytes.Contains(out, []byte(`"trigger": "Every 5 features"`)) {
		t.Error("unknown field of review 2 lost")
	}
	if !bytes.Equal(g.Bytes(), out) {
		t.Error("re-encoding is not stable")
	}
	if last, _ := g.Last(); last.Get("review_id").Int() != 3 {
		t.Errorf("Last = %s", last.Raw)
	}

	arch, err := f.AddReview(reviews.NewReview{AgentType: "ARCHITECTURE", Verdict: "PASS", Issues: issues})
	if err != nil {
		t.Fatal(err)
	}
	var grouped map[string][]reviews.Issue
	if err := json.Unmarshal(arch.Issues, &grouped); err != nil {
		t.Fatal(err)
	}
	if grouped["major"][0].ID != "A4-M1" || grouped["minor"][1].ID != "A4-m2" {
		t.Errorf("architecture issue ids = %+v", grouped)
	}
	if r, _ := f.Review(4); r.Get("feature_id").Type != gjson.Null || r.Get("branch").Type != gjson.Null {
		t.Errorf("architecture review feature_id/branch not null: %s", r.Raw)
	}

	none, err := f.AddReview(reviews.NewReview{AgentType: "REVIEW", Verdict: "PASS"})
	if err != nil {
		t.Fatal(err)
	}
	if string(none.Issues) != `{"critical":[],"major":[],"minor":[],"suggestions":[]}` {
		t.Errorf("review without issues stores %s", none.Issues)
	}
}

func TestAddReviewBadIDChangesNothing(t *testing.T) {
	f := mustParse(t, seedReviews)
	issues, err := reviews.ParseIssues("--issues", []byte(`{"major": [{"id": "R2-M1", "description": "x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.AddReview(reviews.NewReview{AgentType: "REVIEW", Issues: issues}); errs.KindOf(err) != errs.Usage {
		t.Fatalf("AddReview with R2-M1 for review 3 = %v, want usage error", err)
	}
	if f.NextReviewID() != 3 || string(f.Bytes()) != seedReviews+"\n" {
		t.Error("a refused review changed the file")
	}
}

func TestAddFix(t *testing.T) {
	f := mustParse(t, seedReviews)
	fx, err := f.AddFix(reviews.NewFix{
		ReviewID:    1,
		IssuesFixed: []reviews.FixedIssue{{IssueID: "R1-M1", FixDescription: "handled", Commit: "c0ffee"}},
		TestsAdded:  []string{"test_a"},
		Timestamp:   "2025-01-30T12:00:00Z",
	})
	if err != nil {
		t.Fatal(err)
	}
	if fx.FixID != 3 || f.NextFixID() != 4 || fx.AgentType != "FIX" || !fx.PendingReview || fx.MergedToMain {
		t.Errorf("fix = %+v", fx)
	}
	if fx.FeatureID == nil || *fx.FeatureID != "F001" || fx.Branch == nil || *fx.Branch != "feature/health-check" {
		t.Errorf("feature/branch not taken from the review: %v %v", fx.FeatureID, fx.Branch)
	}
	g := mustParse(t, string(f.Bytes()))
	x := g.Fixes()[2]
	if x.Get("issues_fixed.0.issue_id").String() != "R1-M1" || x.Get("issues_fixed.0.commit").String() != "c0ffee" ||
		!x.Get("issues_deferred").IsArray() || x.Get("tests_added.0").String() != "test_a" || x.Get("review_id").Int() != 1 {
		t.Errorf("stored fix = %s", x.Raw)
	}

	// The architecture review has no feature and no branch: they stay null.
	ax, err := f.AddFix(reviews.NewFix{ReviewID: 2, IssuesFixed: []reviews.FixedIssue{{IssueID: "A2-M1"}}, Branch: sp("refactor/a")})
	if err != nil {
		t.Fatal(err)
	}
	if ax.FeatureID != nil || ax.Branch == nil || *ax.Branch != "refactor/a" || ax.TestsAdded == nil || ax.IssuesDeferred == nil {
		t.Errorf("architecture fix = %+v", ax)
	}
}

func TestAddFixRefusals(t *testing.T) {
	tests := []struct {
		name  string
		in    reviews.NewFix
		kind  errs.Kind
		words string
	}{
		{"unknown review", reviews.NewFix{ReviewID: 7}, errs.NotFound, "R7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustParse(t, seedReviews)
			_, err := f.AddFix(tt.in)
			if errs.KindOf(err) != tt.kind || !strings.Contains(fmtErr(err), tt.words) {
				t.Errorf("AddFix = %v, want %v mentioning %q", err, tt.kind, tt.words)
			}
			if f.NextFixID() != 3 || len(f.Fixes()) != 2 || string(f.Bytes()) != seedReviews+"\n" {
				t.Error("a refused fix changed the file")
			}
		})
	}
}

// A review stored by the predecessor with a flat issue list still names
// its issues for a fix.
func TestAddFixFlatIssues(t *testing.T) {
	f := mustParse(t, `{"reviews": [{"review_id": 1, "feature_id": "F009", "issues": [{"id": "R1-C1", "severity": "critical", "description": "x"}]}], "fixes": []}`)
	fx, err := f.AddFix(reviews.NewFix{ReviewID: 1, IssuesFixed: []reviews.FixedIssue{{IssueID: "R1-C1"}}})
	if err != nil || fx.FeatureID == nil || *fx.FeatureID != "F009" {
		t.Errorf("AddFix = %+v, %v", fx, err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestFixCount(t *testing.T) {
	f := mustParse(t, `{"reviews": [], "fixes": [
		{"fix_id": 1, "feature_id": "F001"},
		{"fix_id": 2, "feature_id": "F002"},
		{"fix_id": 3, "feature_id": "F001,F002"},
		{"fix_id": 4, "feature_id": null},
		{"fix_id": 5, "feature_id": "F003, F004"},
		{"fix_id": 6}
	]}`)
	tests := []struct {
		ids  string
		want int
	}{
		{"F001", 2},
		{"F002", 2},
		{"F001,F002", 3},
		{"F002, F001", 3},
		{"F004", 1},
		{"F003,F004", 1},
		{"F005", 0},
		{"F00", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := f.FixCount(tt.ids); got != tt.want {
			t.Errorf("FixCount(%q) = %d, want %d", tt.ids, got, tt.want)
		}
	}
	// A fix added for the batch counts for each of its features.
	g := mustParse(t, `{"reviews": [{"review_id": 1, "feature_id": "F001,F002", "issues": {"major": [{"id": "R1-M1", "description": "d"}]}}], "fixes": []}`)
	if _, err := g.AddFix(reviews.NewFix{ReviewID: 1, IssuesFixed: []reviews.FixedIssue{{IssueID: "R1-M1"}}}); err != nil {
		t.Fatal(err)
	}
	if g.FixCount("F002") != 1 || g.FixCount("F001,F002") != 1 || g.FixCount("F003") != 0 {
		t.Errorf("after a batch fix: F002 %d, batch %d, F003 %d", g.FixCount("F002"), g.FixCount("F001,F002"), g.FixCount("F003"))
	}
}

func TestMarkMerged(t *testing.T) {
	f := mustParse(t, seedReviews)
	if err := f.MarkMerged(2, "2025-01-30T00:00:00Z", sp("m3rge")); err != nil {
		t.Fatal(err)
	}
	if err := f.MarkMerged(1, "2025-01-31T00:00:00Z", nil); err != nil {
		t.Fatal(err)
	}
	x1, x2 := f.Fixes()[0], f.Fixes()[1]
	if !x2.Get("merged_to_main").Bool() || x2.Get("pending_review").Bool() || x2.Get("merged_at").String() != "2025-01-30T00:00:00Z" || x2.Get("merge_commit").String() != "m3rge" {
		t.Errorf("fix 2 = %s", x2.Raw)
	}
	if !x1.Get("merged_to_main").Bool() || x1.Get("merge_commit").Exists() {
		t.Errorf("fix 1 = %s", x1.Raw)
	}
	if got := reviews.FixListLine(x2); !strings.HasSuffix(got, "[VERIFIED]") || !strings.Contains(got, "for ARCHITECTURE") {
		t.Errorf("FixListLine = %q", got)
	}
	out := f.Bytes()
	// In place: the flags keep their positions, new keys go last.
	want := strings.Replace(seedReviews, "\"merged_to_main\": false,\n      \"pending_review\": true\n    }",
		"\"merged_to_main\": true,\n      \"pending_review\": false,\n      \"merged_at\": \"2025-01-31T00:00:00Z\"\n    }", 1)
	want = strings.Replace(want, "\"merged_to_main\": false,\n      \"pending_review\": true\n    }",
		"\"merged_to_main\": true,\n      \"pending_review\": false,\n      \"merged_at\": \"2025-01-30T00:00:00Z\",\n      \"merge_commit\": \"m3rge\"\n    }", 1)
	if string(out) != want+"\n" {
		t.Errorf("MarkMerged changed more than the fix records:\n%s", out)
	}
	if err := f.MarkMerged(9, "x", nil); errs.KindOf(err) != errs.NotFound || !strings.Contains(err.Error(), "FIX-9") {
		t.Errorf("MarkMerged(9) = %v, want NotFound naming FIX-9", err)
	}
}

func TestPassedFeatures(t *testing.T) {
	f := mustParse(t, `{"reviews": [
		{"review_id": 1, "feature_id": "F001", "verdict": "PASS"},
		{"review_id": 2, "feature_id": "F002,F003", "verdict": "PASS"},
		{"review_id": 3, "feature_id": "F004", "verdict": "PASS_WITH_COMMENTS"},
		{"review_id": 4, "feature_id": null, "verdict": "PASS"}
	]}`)
	got := f.PassedFeatures()
	if len(got) != 3 || !got["F001"] || !got["F002"] || !got["F003"] || got["F004"] {
		t.Errorf("PassedFeatures = %v", got)
	}
}

func TestParseFixID(t *testing.T) {
	good := map[string]int{"3": 3, "FIX-3": 3, "fix-3": 3, " Fix-12 ": 12, "1": 1}
	for in, want := range good {
		if got, err := reviews.ParseFixID(in); err != nil || got != want {
			t.Errorf("ParseFixID(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "FIX-0", "FIX-", "F3", "FIX3", "fix-x", "3.0", "R3", "FIX-3-4"} {
		got, err := reviews.ParseFixID(bad)
		if err == nil {
			t.Errorf("ParseFixID(%q) = %d, want an error", bad, got)
			continue
		}
		if errs.KindOf(err) != errs.Usage || !strings.Contains(err.Error(), "FIX-3") {
			t.Errorf("ParseFixID(%q) = %v, want a usage error showing the form", bad, err)
		}
	}
	if reviews.FixLabel(7) != "FIX-7" {
		t.Errorf("FixLabel(7) = %q", reviews.FixLabel(7))
	}
}

func TestNormalizeVerdict(t *testing.T) {
	tests := []struct{ in, want string }{
		{"PASS", "PASS"}, {"pass", "PASS"}, {"APPROVE", "PASS"}, {"approved", "PASS"},
		{"PASS_WITH_COMMENTS", "PASS_WITH_COMMENTS"}, {" request_changes ", "REQUEST_CHANGES"},
		{"REJECT", "REJECT"}, {"Rejected", "REJECT"},
	}
	for _, tt := range tests {
		if got, err := reviews.NormalizeVerdict(tt.in); err != nil || got != tt.want {
			t.Errorf("NormalizeVerdict(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "LGTM", "NEEDS_FIX", "SUCCESS", "PASS WITH COMMENTS"} {
		_, err := reviews.NormalizeVerdict(bad)
		if errs.KindOf(err) != errs.Usage || !strings.Contains(fmtErr(err), "--verdict") {
			t.Errorf("NormalizeVerdict(%q) = %v, want a usage error naming --verdict", bad, err)
		}
	}
}

func idsOf(issues []reviews.Issue) []string {
	out := make([]string, len(issues))
	for i, is := range issues {
		out[i] = is.ID
	}
	return out
}

// A fix's own text is stored as written, like every other value.
func TestAddFixDoesNotEscapeHTML(t *testing.T) {
	f := mustParse(t, seedReviews)
	if _, err := f.AddFix(reviews.NewFix{ReviewID: 1, IssuesFixed: []reviews.FixedIssue{{IssueID: "R1-M1", FixDescription: "return 503 when db <nil> && retry"}}}); err != nil {
		t.Fatal(err)
	}
	if out := f.Bytes(); !bytes.Contains(out, []byte(`"fix_description": "return 503 when db <nil> && retry"`)) {
		t.Errorf("fix_description escaped or lost:\n%s", f.Fixes()[2].Raw)
	}
}

// A file whose last review id is the largest one accepted must not hand
// out an id that overflows or that Parse then refuses.
func TestAddReviewAfterLargestID(t *testing.T) {
	for _, id := range []string{"9223372036854775807", fmt.Sprint(jsondoc.MaxID)} {
		f, err := reviews.Parse([]byte(`{"reviews": [{"review_id": ` + id + `}], "fixes": []}`))
		if err != nil {
			continue // refusing such an id is fine
		}
		if _, err := f.AddReview(reviews.NewReview{AgentType: "REVIEW", Verdict: "PASS"}); err != nil {
			continue // refusing to add is fine
		}
		if _, err := reviews.Parse(f.Bytes()); err != nil {
			t.Errorf("after review %s, AddReview produced a file Parse rejects: %v", id, err)
		}
	}
}

// A rejected feature is re-implemented: its fix cycles start again after the
// rejection (by verdict or by a recorded decision).
func TestFixCountRestartsAfterRejection(t *testing.T) {
	f := mustParse(t, `{"reviews": [
		{"review_id": 1, "feature_id": "F001", "verdict": "REQUEST_CHANGES"},
		{"review_id": 2, "feature_id": "F001", "verdict": "REJECT"},
		{"review_id": 3, "feature_id": "F001,F002", "verdict": "REQUEST_CHANGES"},
		{"review_id": 4, "feature_id": "F002", "verdict": "REQUEST_CHANGES", "decision": {"reject": true}},
		{"review_id": 5, "feature_id": "F003", "verdict": "rejected"}
	], "fixes": [
		{"fix_id": 1, "review_id": 1, "feature_id": "F001"},
		{"fix_id": 2, "review_id": 1, "feature_id": "F001"},
		{"fix_id": 3, "review_id": 3, "feature_id": "F001,F002"},
		{"fix_id": 4, "review_id": 5, "feature_id": "F003"}
	]}`)
	tests := []struct {
		ids  string
		want int
	}{
		{"F001", 1}, // fixes 1 and 2 came before the REJECT of review 2
		{"F002", 0}, // review 4's decision rejected F002 after fix 3
		{"F003", 0}, // "rejected" is the REJECT verdict; fix 4 answers the rejecting review itself
		{"F009", 0},
	}
	for _, tt := range tests {
		if got := f.FixCount(tt.ids); got != tt.want {
			t.Errorf("FixCount(%q) = %d, want %d", tt.ids, got, tt.want)
		}
	}
}

func TestPassedFeaturesByVerdictOrDecision(t *testing.T) {
	f := mustParse(t, `{"reviews": [
		{"review_id": 1, "feature_id": "F001", "verdict": "approved"},
		{"review_id": 2, "feature_id": "F002", "verdict": "PASS_WITH_COMMENTS", "decision": {"merge": true}},
		{"review_id": 3, "feature_id": "F003", "verdict": "REQUEST_CHANGES", "decision": {"merge": false}},
		{"review_id": 4, "feature_id": "F004", "verdict": "REJECT"}
	]}`)
	got := f.PassedFeatures()
	if len(got) != 2 || !got["F001"] || !got["F002"] {
		t.Errorf("PassedFeatures = %v, want F001 (APPROVED is PASS) and F002 (decided to merge)", got)
	}
}

func TestHealth(t *testing.T) {
	cov := func(v float64) *float64 { return &v }
	minor := []reviews.Issue{{Severity: "minor"}, {Severity: "suggestions"}}
	major := []reviews.Issue{{Severity: "minor"}, {Severity: "major"}}
	tests := []struct {
		name     string
		issues   []reviews.Issue
		coverage *float64
		want     string
	}{
		{"clean, high coverage", nil, cov(95), "GOOD"},
		{"clean, just over 80", minor, cov(80.5), "GOOD"},
		{"clean, exactly 80", minor, cov(80), "FAIR"},
		{"clean, exactly 60", nil, cov(60), "FAIR"},
		{"clean, under 60", nil, cov(59.9), "NEEDS_ATTENTION"},
		{"clean, unknown coverage", minor, nil, "FAIR"},
		{"major issue, high coverage", major, cov(99), "NEEDS_ATTENTION"},
		{"critical issue, unknown coverage", []reviews.Issue{{Severity: "critical"}}, nil, "NEEDS_ATTENTION"},
	}
	for _, tt := range tests {
		if got := reviews.Health(tt.issues, tt.coverage); got != tt.want {
			t.Errorf("%s: Health = %s, want %s", tt.name, got, tt.want)
		}
	}
	// AddReview records it for architecture reviews only.
	f := reviews.New()
	issues, err := reviews.ParseIssues("--issues", []byte(`{"major": [{"description": "God class"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	arch, err := f.AddReview(reviews.NewReview{AgentType: "ARCHITECTURE", Verdict: "REQUEST_CHANGES", Issues: issues, Coverage: cov(90)})
	if err != nil || arch.HealthStatus != "NEEDS_ATTENTION" {
		t.Errorf("architecture review health %q, %v", arch.HealthStatus, err)
	}
	feat, err := f.AddReview(reviews.NewReview{AgentType: "REVIEW", Verdict: "PASS", Coverage: cov(90)})
	if err != nil || feat.HealthStatus != "" {
		t.Errorf("feature review health %q, %v", feat.HealthStatus, err)
	}
	if r, _ := f.Review(2); r.Get("health_status").Exists() {
		t.Errorf("feature review stored a health_status: %s", r.Raw)
	}
}

func TestParseReviewID(t *testing.T) {
	good := map[string]int{"3": 3, "R3": 3, "r3": 3, " R12 ": 12, "A5": 5, "a5": 5, "1": 1}
	for in, want := range good {
		if got, err := reviews.ParseReviewID(in); err != nil || got != want {
			t.Errorf("ParseReviewID(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
	bad := map[string]string{
		"": "R3", "0": "R3", "-1": "R3", "R0": "R3", "R": "R3", "R-3": "R3", "3.0": "R3", "RR3": "R3",
		"FIX-3": "is a fix id", "fix-1": "is a fix id",
		"R1-M1": "the review it belongs to is R1", "A5-C2": "the review it belongs to is R5", "r2-m3": "is R2",
	}
	for in, want := range bad {
		got, err := reviews.ParseReviewID(in)
		if err == nil {
			t.Errorf("ParseReviewID(%q) = %d, want an error", in, got)
			continue
		}
		if errs.KindOf(err) != errs.Usage || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseReviewID(%q) = %v, want a usage error containing %q", in, err, want)
		}
	}
}
