package reviews_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/reviews"
)

// FuzzParseReviews: Parse never panics; what it accepts encodes to valid
// JSON that parses again to the same bytes; a review, a fix of the last
// review's issues and its merge can be added and the file still parses.
func FuzzParseReviews(f *testing.F) {
	for _, s := range []string{
		seedReviews, `{}`, `{"schema_version": "1.0", "reviews": [], "fixes": []}`,
		`{"reviews": [{"review_id": 1, "issues": [{"id": "R1-M1", "severity": "major", "description": "x"}]}]}`,
		`{"reviews": [{"review_id": 1}, {"review_id": 1}]}`, `{"fixes": [{"fix_id": 2.0, "feature_id": "F1,F2"}]}`,
		`{"reviews": {}}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := reviews.Parse(data)
		if err != nil {
			return
		}
		out := p.Bytes()
		if !json.Valid(out) {
			t.Fatalf("Bytes is not JSON:\n%s\nfrom %q", out, data)
		}
		q, err := reviews.Parse(out)
		if err != nil {
			t.Fatalf("Bytes does not parse again: %v\n%s\nfrom %q", err, out, data)
		}
		if q.NextReviewID() != p.NextReviewID() || q.NextFixID() != p.NextFixID() {
			t.Fatalf("next ids changed on re-reading")
		}
		if out2 := q.Bytes(); !bytes.Equal(out, out2) {
			t.Fatalf("re-encoding is not stable:\n%s\nthen\n%s", out, out2)
		}
		_ = q.FixCount("F001,F002")
		_ = q.PassedFeatures()
		for _, r := range q.Reviews() {
			_ = reviews.ListLine(r)
		}
		for _, x := range q.Fixes() {
			_ = reviews.FixListLine(x)
		}

		if last, err := q.Last(); err == nil {
			var fixed []reviews.FixedIssue
			for _, is := range reviews.ReadIssues(last.Get("issues")) {
				fixed = append(fixed, reviews.FixedIssue{IssueID: is.ID})
			}
			fx, err := q.AddFix(reviews.NewFix{ReviewID: int(last.Get("review_id").Int()), IssuesFixed: fixed})
			switch {
			case err != nil && q.NextFixID() > jsondoc.MaxID && errs.KindOf(err) == errs.Conflict:
				// the fix ids are used up: refused, nothing added
			case err != nil:
				t.Fatalf("AddFix naming the last review's own issues: %v", err)
			default:
				if err := q.MarkMerged(fx.FixID, "2025-01-29T10:00:00Z", nil); err != nil {
					t.Fatalf("MarkMerged of the fix just added: %v", err)
				}
			}
		}
		next := q.NextReviewID()
		rv, err := q.AddReview(reviews.NewReview{AgentType: "REVIEW", Verdict: "PASS"})
		switch {
		case err != nil && next > jsondoc.MaxID && errs.KindOf(err) == errs.Conflict:
			next-- // the review ids are used up: refused, nothing added
		case err != nil:
			t.Fatalf("AddReview: %v", err)
		case rv.ReviewID != next:
			t.Fatalf("AddReview gave id %d, NextReviewID said %d", rv.ReviewID, next)
		}
		r, err := reviews.Parse(q.Bytes())
		if err != nil {
			t.Fatalf("after adding, the file does not parse: %v\nfrom %q", err, data)
		}
		if r.NextReviewID() != next+1 {
			t.Fatalf("after AddReview: next review id %d, want %d", r.NextReviewID(), next+1)
		}
	})
}

// FuzzParseIssues: ParseIssues never panics and refuses with usage errors;
// what it accepts is numbered into valid grouped JSON in which every issue
// has a distinct id of the review and reads back with its severity.
func FuzzParseIssues(f *testing.F) {
	for _, s := range []string{
		`{"critical": [], "major": [{"id": "R1-M1", "description": "Missing error handling", "location": "x.py:15", "suggestion": "try"}], "minor": [], "suggestions": []}`,
		`[{"severity": "major", "description": "a"}, {"severity": "nit", "description": "b", "id": "R1-S2"}]`,
		`{"HIGH": [{"description": "a", "id": "R1-M3"}, {"description": "b"}], "low": [{"description": "c"}]}`,
		`{"major": [}`, `[]`, `{}`, `"x"`, `{"major": [{"description": "d", "id": 5}]}`,
		`{"major": [{"description": "d", "id": "R1-M1"}, {"description": "e", "id": "R1-M1"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pend, err := reviews.ParseIssues("--issues", data)
		if err != nil {
			if errs.KindOf(err) != errs.Usage {
				t.Fatalf("ParseIssues error kind %v, want usage: %v", errs.KindOf(err), err)
			}
			return
		}
		raw, err := reviews.AssignIDs(pend, "R1-")
		if err != nil {
			if errs.KindOf(err) != errs.Usage {
				t.Fatalf("AssignIDs error kind %v, want usage: %v", errs.KindOf(err), err)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("AssignIDs output is not JSON: %s", raw)
		}
		got := reviews.ReadIssues(gjson.ParseBytes(raw))
		if len(got) != len(pend) {
			t.Fatalf("%d issues in, %d stored: %s", len(pend), len(got), raw)
		}
		seen := map[string]bool{}
		for _, is := range got {
			if !strings.HasPrefix(is.ID, "R1-") || seen[is.ID] {
				t.Fatalf("bad or repeated id %q in %s", is.ID, raw)
			}
			seen[is.ID] = true
			if strings.TrimSpace(is.Description) == "" {
				t.Fatalf("issue %s stored without a description: %s", is.ID, raw)
			}
		}
		count := map[string]int{}
		for _, p := range pend {
			count[p.Severity]++
		}
		for _, is := range got {
			count[is.Severity]--
		}
		for sev, n := range count {
			if n != 0 {
				t.Fatalf("severity %s count off by %d: %s", sev, n, raw)
			}
		}
	})
}
