package workflow

import (
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/errs"
)

// verdictOf is what a rule answered, for a table row: "ok", or the error's
// kind followed by its message.
func verdictOf(err error) string {
	if err == nil {
		return "ok"
	}
	return errs.KindOf(err).String() + ": " + err.Error()
}

// check compares a rule's answer with a row's want: "ok", or a kind name
// (refused, usage, not_found, conflict) and words the message says.
func check(t *testing.T, name string, err error, want string) {
	t.Helper()
	got := verdictOf(err)
	if want == "ok" {
		if got != "ok" {
			t.Errorf("%s: %s, want ok", name, got)
		}
		return
	}
	kind, words, _ := strings.Cut(want, ": ")
	if !strings.HasPrefix(got, kind+": ") || !strings.Contains(got, words) {
		t.Errorf("%s: %s, want %s", name, got, want)
	}
}

func TestReviewSubject(t *testing.T) {
	for _, tc := range []struct {
		name, agent string
		features    []string
		branch      string
		want        string
	}{
		{"a feature review", Review, []string{"F001"}, "feature/a", "ok"},
		{"a review needs its branch", Review, []string{"F001"}, "", "usage: --branch: a REVIEW names the branch"},
		{"a review needs its feature", Review, nil, "feature/a", "usage: --feature-id: a REVIEW names the feature"},
		{"a refactor review names none", Review, nil, "refactor/arch-review-4", "ok"},
		{"an architecture review of the codebase", Architecture, nil, "", "ok"},
		{"an architecture review names no feature", Architecture, []string{"F001"}, "", "usage: an ARCHITECTURE review is of the whole codebase"},
	} {
		check(t, tc.name, ReviewSubject(tc.agent, tc.features, tc.branch), tc.want)
	}
}

func TestCheckReview(t *testing.T) {
	sent := func(s string) *string { return &s }
	base := NewReview{AgentType: Review, Verdict: "REQUEST_CHANGES", Features: []string{"F001"}, Branch: "feature/a", Repo: "/p", BranchExists: true}
	landed := &ReviewRef{ID: 4, Branch: "feature/a", Verdict: "PASS", MergeCommit: "abcdef0123456789"}
	for _, tc := range []struct {
		name string
		edit func(r *NewReview)
		want string
	}{
		{"changes requested of the work sent", func(r *NewReview) { r.Work = WorkUnderReview{StatusFeature: sent("F001"), StatusBranch: "feature/a"} }, "ok"},
		{"a PASS with a major issue", func(r *NewReview) { r.Verdict, r.Blocking = "PASS", true }, "refused: --verdict PASS with a critical or major issue"},
		{"a PASS_WITH_COMMENTS with a major issue", func(r *NewReview) { r.Verdict, r.Blocking = "PASS_WITH_COMMENTS", true }, "ok"},
		{"naming a feature not sent", func(r *NewReview) {
			r.Features = []string{"F001", "F002"}
			r.Work = WorkUnderReview{StatusFeature: sent("F001"), StatusBranch: "feature/a"}
		}, "refused: --feature-id: F002 is not part of the work under review on feature/a, which is F001"},
		{"a person names what they reviewed", func(r *NewReview) {
			r.Person, r.Features = true, []string{"F002"}
			r.Work = WorkUnderReview{StatusFeature: sent("F001"), StatusBranch: "feature/a"}
		}, "ok"},
		{"the features earlier reviews of the branch named", func(r *NewReview) {
			r.Features = []string{"F009"}
			r.Work = WorkUnderReview{StatusFeature: sent("F003"), StatusBranch: "feature/c", BranchFeatures: []string{"F001", "F002", "F001"}}
		}, "refused: F009 is not part of the work under review on feature/a, which is F001,F002"},
		{"a branch of the reviewer's own in a session sent work", func(r *NewReview) {
			r.Features = []string{"F002"}
			r.Work = WorkUnderReview{StatusFeature: sent("F001"), StatusBranch: "feature/b", SentBranch: "feature/b"}
		}, "refused: F002 is not part of the work under review"},
		{"a branch no one sent, outside a session", func(r *NewReview) {
			r.Features = []string{"F002"}
			r.Work = WorkUnderReview{StatusFeature: sent("F001"), StatusBranch: "feature/b"}
		}, "ok"},
		{"a feature named on a refactor", func(r *NewReview) {
			r.Branch = "refactor/arch-review-3"
			r.Work = WorkUnderReview{StatusBranch: "refactor/arch-review-3"}
		}, "refused: the work under review on refactor/arch-review-3 is an architecture refactor"},
		{"an empty current feature is no refactor", func(r *NewReview) {
			r.Branch = "refactor/arch-review-3"
			r.Work = WorkUnderReview{StatusFeature: sent(""), StatusBranch: "refactor/arch-review-3"}
		}, "ok"},
		{"a PASS of a branch that does not exist", func(r *NewReview) { r.Verdict, r.BranchExists = "PASS", false }, "refused: branch feature/a does not exist in the repository at /p"},
		{"changes asked of a branch that does not exist", func(r *NewReview) { r.BranchExists = false }, "ok"},
		{"a PASS outside a repository", func(r *NewReview) { r.Verdict, r.BranchExists, r.Repo = "PASS", false, "" }, "ok"},
		// a review of work that has landed changes nothing (issue 26)
		{"changes asked after the merge", func(r *NewReview) { r.Landed, r.BranchLanded, r.BranchExists = landed, true, false }, "refused: --branch feature/a: review R4 merged it into main as abcdef0"},
		{"a REJECT after the merge", func(r *NewReview) { r.Verdict, r.Landed, r.BranchLanded = "REJECT", landed, true }, "refused: its work has landed"},
		{"a PASS after the merge", func(r *NewReview) { r.Verdict, r.Landed, r.BranchLanded = "PASS", landed, true }, "refused: its work has landed"},
		{"a person's review after the merge", func(r *NewReview) { r.Person, r.Landed, r.BranchLanded = true, landed, true }, "refused: its work has landed"},
		{"new work on the merged branch's name", func(r *NewReview) { r.Landed, r.BranchLanded = landed, false }, "ok"},
		{"an architecture review after a merge", func(r *NewReview) {
			r.AgentType, r.Features, r.Branch, r.Landed, r.BranchLanded = Architecture, nil, "main", landed, true
		}, "ok"},
	} {
		r := base
		tc.edit(&r)
		check(t, tc.name, CheckReview(r), tc.want)
	}
}

func TestCheckReviewedHead(t *testing.T) {
	base := ReviewedHead{Verdict: "PASS", Branch: "feature/a", From: "1111111aaaa", To: "2222222bbbb", Main: "main"}
	for _, tc := range []struct {
		name    string
		edit    func(h *ReviewedHead)
		want    string
		warning bool
	}{
		{"a PASS of work", func(h *ReviewedHead) {}, "ok", false},
		{"a PASS of main", func(h *ReviewedHead) { h.Branch = "main" }, "refused: --verdict PASS: main is the branch reviewed work is merged into", false},
		{"an architecture review of main", func(h *ReviewedHead) { h.Branch, h.Architecture = "main", true }, "ok", false},
		{"a PASS of commits already on main", func(h *ReviewedHead) { h.OnMain = true }, "refused: feature/a (at 2222222) has no commit that is not on main", false},
		{"changes asked of commits on main", func(h *ReviewedHead) { h.OnMain, h.Verdict = true, "REQUEST_CHANGES" }, "ok", false},
		{"a person's PASS of main", func(h *ReviewedHead) { h.Branch, h.Person = "main", true }, "ok", false},
		{"outside a repository", func(h *ReviewedHead) { h.Main, h.OnMain = "", true }, "ok", false},
		{"copies of the state files", func(h *ReviewedHead) { h.StateFiles = []string{"progress.json"} }, "refused: feature/a commits copies of baton's state files (progress.json)", false},
		{"the predecessor's tracked state", func(h *ReviewedHead) { h.StateFiles, h.PredecessorTracked = []string{"progress.json"}, true }, "ok", true},
		{"the head sent", func(h *ReviewedHead) { h.SentBranch, h.SentHead = "feature/a", "2222222bbbb" }, "ok", false},
		{"an older head than the one sent", func(h *ReviewedHead) { h.SentBranch, h.SentHead, h.WithinSent = "feature/a", "3333333cccc", true },
			"refused: --verdict PASS: the work sent to this review is feature/a at 3333333, not feature/a at 2222222", false},
		{"changes asked of an older head", func(h *ReviewedHead) {
			h.Verdict, h.SentBranch, h.SentHead, h.WithinSent = "REQUEST_CHANGES", "feature/a", "3333333cccc", true
		}, "ok", false},
		{"commits made during the review", func(h *ReviewedHead) { h.SentBranch, h.SentHead = "feature/a", "3333333cccc" },
			"refused: feature/a is at 2222222, but the work sent to this review was feature/a at 3333333", false},
		{"another branch holding the work sent and more", func(h *ReviewedHead) { h.SentBranch, h.SentHead, h.SentWithin = "feature/b", "3333333cccc", true },
			"refused: feature/a holds the work sent to this review (feature/b at 3333333)", false},
		{"another branch passed instead of the one sent", func(h *ReviewedHead) { h.SentBranch, h.SentHead = "feature/b", "3333333cccc" },
			"refused: the work sent to this review is feature/b at 3333333, not feature/a at 2222222", false},
		{"changes asked of another branch", func(h *ReviewedHead) { h.Verdict, h.SentBranch, h.SentHead = "REJECT", "feature/b", "3333333cccc" }, "ok", false},
	} {
		h := base
		tc.edit(&h)
		warning, err := CheckReviewedHead(h)
		check(t, tc.name, err, tc.want)
		if (warning != "") != tc.warning {
			t.Errorf("%s: warning %q, want one: %v", tc.name, warning, tc.warning)
		}
	}
}

func TestStateFilesOnBranch(t *testing.T) {
	files := []string{"a/progress.json", "a/reviews.json", "a/feature_list.json", "a/.baton/config", "a/.baton/events.jsonl", "a/.baton/lock"}
	_, err := StateFilesOnBranch("feature/a", files, false)
	check(t, "six files", err, "refused: (a/progress.json, a/reviews.json, a/feature_list.json, a/.baton/config, a/.baton/events.jsonl, …)")
	if len(files) != 6 || files[5] != "a/.baton/lock" {
		t.Errorf("the list given was changed: %q", files)
	}
	check(t, "none", func() error { _, err := StateFilesOnBranch("feature/a", nil, false); return err }(), "ok")
}
