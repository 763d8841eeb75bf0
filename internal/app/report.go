package app

import (
	"context"
	"strings"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/reviews"
)

// ReportData is everything the audit report shows.
type ReportData struct {
	Project     string
	StateDir    string
	GeneratedAt string
	Version     string
	Status      StatusResult
	Verify      VerifyResult
	VerifyError string
	Stories     []Story
	Reviews     []ReportReview
	Fixes       []map[string]any
	Merges      []StoryMerge
	Events      []LogLine
	Refused     []LogLine
}

// ReportReview is one review cycle: the review, its issues and what
// answered them, and the decision it led to.
type ReportReview struct {
	ID       int
	Verdict  string
	Agent    string
	Features string
	Branch   string
	Range    string
	Summary  string
	Time     string
	Decision map[string]any
	Issues   []StoryIssue
	Merge    string
	Rejected string
}

// reportData gathers the stories, review cycles and timeline.
func (sn *snapshot) reportData() (ReportData, error) {
	lines, err := readLog(sn.s)
	if err != nil {
		return ReportData{}, err
	}
	d := ReportData{StateDir: sn.s.Dir, Status: sn.status(), Events: lines, Refused: []LogLine{}}
	d.Project = d.Status.Project
	for _, l := range lines {
		if l.Refused != "" {
			d.Refused = append(d.Refused, l)
		}
	}
	if sn.feat != nil {
		for _, it := range sn.feat.All() {
			st, err := sn.story(it.ID, lines)
			if err != nil {
				return d, err
			}
			d.Stories = append(d.Stories, st)
		}
	}
	if sn.rev != nil {
		d.Reviews, d.Merges = reviewCycles(sn.rev)
		for _, x := range sn.rev.Fixes() {
			m, _ := x.Value().(map[string]any)
			d.Fixes = append(d.Fixes, m)
		}
	}
	return d, nil
}

// reviewCycles lists every review with its issues, what answered each,
// and its decision; and the merges.
func reviewCycles(rv *reviews.File) ([]ReportReview, []StoryMerge) {
	var out []ReportReview
	var merges []StoryMerge
	for _, r := range rv.Reviews() {
		id := int(r.Get("review_id").Int())
		st := Story{}
		for _, is := range reviews.ReadIssues(r.Get("issues")) {
			st.Issues = append(st.Issues, StoryIssue{ID: is.ID, ReviewID: id, Severity: is.Severity, Description: is.Description, Location: is.Location, Status: "open"})
		}
		for _, x := range rv.Fixes() {
			if int(x.Get("review_id").Int()) == id {
				st.answer(x)
			}
		}
		dec, _ := r.Get("decision").Value().(map[string]any)
		rr := ReportReview{ID: id, Verdict: reviews.VerdictOf(r), Agent: r.Get("agent_type").String(), Features: strings.Join(features.SplitIDs(r.Get("feature_id").String()), ", "),
			Branch: r.Get("branch").String(), Summary: r.Get("summary").String(), Time: r.Get("timestamp").String(), Decision: dec, Issues: st.Issues,
			Rejected: r.Get("rejected_at").String()}
		if cr := r.Get("commit_range"); cr.Exists() {
			rr.Range = cr.Get("from").String() + ".." + cr.Get("to").String()
		}
		if mc := r.Get("merge_commit").String(); mc != "" {
			rr.Merge = mc
			merges = append(merges, StoryMerge{id, rr.Verdict, rr.Branch, mc, r.Get("merged_onto").String(), r.Get("merged_at").String()})
		}
		out = append(out, rr)
	}
	return out, merges
}

// Report gathers everything the audit report shows (GeneratedAt and
// Version are the front end's to fill).
func (a *App) Report(ctx context.Context, c Caller) (ReportData, error) {
	if a.remote != nil {
		return forward[ReportData](ctx, a, c, "report", nil)
	}
	a = a.as(c)
	var d ReportData
	if err := a.reportingSnapshot(ctx, true, func(sn *snapshot) error {
		if sn.prog == nil {
			return firstProblemOr(sn, missing(sn.s, "progress.json", progressHint))
		}
		var err error
		d, err = sn.reportData()
		return err
	}); err != nil {
		return d, err
	}
	res, err := a.Verify(ctx, c, VerifyInput{})
	if err != nil {
		d.Verify, d.VerifyError = VerifyResult{Problems: []Problem{}}, err.Error()
	} else {
		d.Verify = res
	}
	return d, nil
}
