package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

const reviewsHint = "baton reviews init"

// readArg reads a JSON-or-file argument: inline JSON, "-" for stdin, or the
// path of a file holding the JSON.
func (a *App) readArg(flag, v string) ([]byte, error) {
	t := strings.TrimSpace(v)
	switch {
	case t == "-" && a.env.Stdin == nil:
		return nil, errs.New(errs.Usage, "%s: \"-\" reads standard input, and this call has none: give the JSON itself", flag)
	case t == "-":
		b, err := io.ReadAll(a.env.Stdin)
		if err != nil {
			return nil, errs.New(errs.Usage, "%s: reading stdin: %v", flag, err)
		}
		return b, nil
	case strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") || t == "":
		return []byte(v), nil
	}
	p := t
	if !filepath.IsAbs(p) {
		p = filepath.Join(a.fileDir(), p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, errs.New(errs.Usage, "%s: %q is neither JSON nor a readable file (%v)", flag, v, err)
	}
	return b, nil
}

// ---- reviews add-review

// AddReviewInput is what add-review takes. Issues and Metrics are JSON
// (inline, "-" for the front end's stdin, or a file path).
type AddReviewInput struct {
	Agent       string  `json:"agent_type"`
	FeatureID   string  `json:"feature_id,omitempty"`
	Branch      string  `json:"branch,omitempty"`
	Verdict     string  `json:"verdict"`
	Summary     string  `json:"summary"`
	Issues      string  `json:"issues,omitempty"`
	CommitFrom  string  `json:"commit_from,omitempty"`
	CommitTo    string  `json:"commit_to,omitempty"`
	Metrics     string  `json:"metrics,omitempty"`
	Coverage    float64 `json:"coverage,omitempty"`
	HasCoverage bool    `json:"has_coverage,omitempty"` // Coverage was given
}

func (o AddReviewInput) review(a *App) (reviews.NewReview, error) {
	var in reviews.NewReview
	var err error
	if in.AgentType, err = progress.Choose("--agent-type", o.Agent, reviews.ReviewerTypes, nil); err != nil {
		return in, err
	}
	if in.Verdict, err = reviews.NormalizeVerdict(o.Verdict); err != nil {
		return in, err
	}
	in.FeatureID = progress.Nullable(strings.Join(features.SplitIDs(o.FeatureID), ","))
	in.Branch = progress.Nullable(o.Branch)
	if err := workflow.ReviewSubject(in.AgentType, features.SplitIDs(o.FeatureID), Deref(in.Branch)); err != nil {
		return in, err
	}
	in.Summary = o.Summary
	if o.Issues != "" {
		data, err := a.readArg("--issues", o.Issues)
		if err != nil {
			return in, err
		}
		if in.Issues, err = reviews.ParseIssues("--issues", data); err != nil {
			return in, err
		}
	}
	if o.CommitFrom != "" || o.CommitTo != "" {
		from, err := a.commitRef("--commit-from", o.CommitFrom)
		if err != nil {
			return in, err
		}
		to, err := a.commitRef("--commit-to", o.CommitTo)
		if err != nil {
			return in, err
		}
		in.CommitRange = &progress.Range{From: from, To: to, Description: "Reviewing commits from main to feature branch HEAD"}
	}
	in.Timestamp = jsondoc.Timestamp(a.env.Now())
	if o.Metrics != "" {
		data, err := a.readArg("--metrics", o.Metrics)
		if err != nil {
			return in, err
		}
		if err := jsondoc.Check(data); err != nil || !gjson.ParseBytes(data).IsObject() {
			return in, errs.New(errs.Usage, "--metrics: must be a JSON object such as {\"test_coverage_percent\": 72}")
		}
		in.Metrics = json.RawMessage(data)
		if c := gjson.GetBytes(data, "test_coverage_percent"); c.Type == gjson.Number {
			v := c.Num
			in.Coverage = &v
		}
	}
	if o.HasCoverage {
		if o.Coverage < 0 || o.Coverage > 100 {
			return in, errs.New(errs.Usage, "--coverage: a percentage from 0 to 100, got %v", o.Coverage)
		}
		v := o.Coverage
		in.Coverage = &v
	}
	return in, nil
}

// featureNames joins the names of the reviewed features, as the seed's
// feature_name shows them.
func featureNames(st *state, ids []string) string {
	feat, ok, err := st.featuresOpt()
	if err != nil || !ok {
		return ""
	}
	var names []string
	for _, id := range ids {
		if f, err := feat.Get(id); err == nil && f.Name != "" {
			names = append(names, f.Name)
		}
	}
	return strings.Join(names, ", ")
}

// ---- reviews add-fix

// AddFixInput is what add-fix takes. IssuesFixed and IssuesDeferred are
// JSON lists (inline, "-" for stdin, or a file path).
type AddFixInput struct {
	ReviewID       int    `json:"review_id"`
	FeatureID      string `json:"feature_id,omitempty"`
	Branch         string `json:"branch,omitempty"`
	IssuesFixed    string `json:"issues_fixed,omitempty"`
	IssuesDeferred string `json:"issues_deferred,omitempty"`
	TestsAdded     string `json:"tests_added,omitempty"` // comma-separated
}

func (o AddFixInput) fix(a *App) (reviews.NewFix, error) {
	in := reviews.NewFix{ReviewID: o.ReviewID, Timestamp: jsondoc.Timestamp(a.env.Now())}
	if o.ReviewID < 1 {
		return in, errs.New(errs.Usage, "--review-id: must be a review id (1 or more), got %d", o.ReviewID)
	}
	in.FeatureID = progress.Nullable(strings.Join(features.SplitIDs(o.FeatureID), ","))
	in.Branch = progress.Nullable(o.Branch)
	in.TestsAdded = features.SplitIDs(o.TestsAdded)
	if o.IssuesFixed != "" {
		data, err := a.readArg("--issues-fixed", o.IssuesFixed)
		if err != nil {
			return in, err
		}
		if in.IssuesFixed, err = parseFixedIssues(data); err != nil {
			return in, err
		}
	}
	if o.IssuesDeferred != "" {
		data, err := a.readArg("--issues-deferred", o.IssuesDeferred)
		if err != nil {
			return in, err
		}
		if in.IssuesDeferred, err = parseList("--issues-deferred", data); err != nil {
			return in, err
		}
	}
	return in, nil
}

// parseList reads a JSON list argument into its raw items.
func parseList(flag string, data []byte) ([]json.RawMessage, error) {
	if err := jsondoc.Check(data); err != nil {
		ie := err.(*jsondoc.InvalidError)
		line, col := jsondoc.Position(data, ie.Offset)
		return nil, errs.New(errs.Usage, "%s: invalid JSON at line %d, column %d: %s", flag, line, col, ie.Msg)
	}
	r := gjson.ParseBytes(data)
	if !r.IsArray() {
		return nil, errs.New(errs.Usage, "%s: must be a JSON list", flag)
	}
	var out []json.RawMessage
	r.ForEach(func(_, v gjson.Result) bool { out = append(out, json.RawMessage(v.Raw)); return true })
	return out, nil
}

// parseFixedIssues reads --issues-fixed: objects with issue_id, or ids.
func parseFixedIssues(data []byte) ([]reviews.FixedIssue, error) {
	items, err := parseList("--issues-fixed", data)
	if err != nil {
		return nil, err
	}
	var out []reviews.FixedIssue
	for i, raw := range items {
		v := gjson.ParseBytes(raw)
		var fi reviews.FixedIssue
		switch {
		case v.Type == gjson.String:
			fi.IssueID = v.Str
		case v.IsObject():
			if err := json.Unmarshal(raw, &fi); err != nil {
				return nil, errs.New(errs.Usage, "--issues-fixed: item [%d]: %v", i, err)
			}
		}
		if strings.TrimSpace(fi.IssueID) == "" {
			return nil, errs.New(errs.Usage, "--issues-fixed: item [%d] needs an \"issue_id\" such as R1-M1", i)
		}
		out = append(out, fi)
	}
	return out, nil
}

// reviewIssueIDs are a stored review's issue ids.
func reviewIssueIDs(rv gjson.Result) []string {
	var ids []string
	for _, is := range reviews.ReadIssues(rv.Get("issues")) {
		ids = append(ids, is.ID)
	}
	return ids
}

// fixedIDs are the issue ids a fix names.
func fixedIDs(fixed []reviews.FixedIssue) []string {
	ids := make([]string, len(fixed))
	for i, fi := range fixed {
		ids[i] = fi.IssueID
	}
	return ids
}

// ---- reviews get-fix-count

// FixCountResult counts a feature's fixes against the fix-cycle limit.
type FixCountResult struct {
	FeatureID    string   `json:"-"`
	Features     []string `json:"features"`
	FixCount     int      `json:"fix_count"`
	Remaining    int      `json:"remaining"`
	MaxFixCycles int      `json:"max_fix_cycles"`
	LimitReached bool     `json:"limit_reached"`
}

func fixCountOf(r *reviews.File, feature string, cfg store.Config) FixCountResult {
	return fixCountResult(feature, cfg.Limits().FixCycles(r.FixCount(feature)))
}

func fixCountResult(feature string, fc workflow.FixCycles) FixCountResult {
	return FixCountResult{FeatureID: feature, Features: NonNil(features.SplitIDs(feature)), FixCount: fc.Used, Remaining: fc.Remaining, MaxFixCycles: fc.Max, LimitReached: fc.Reached}
}

// ---- reviews show-issues

// ShowIssuesResult is the last review's issues, for fixing.
type ShowIssuesResult struct {
	ReviewID  int             `json:"review_id"`
	FeatureID string          `json:"-"`
	Features  []string        `json:"features"`
	Verdict   string          `json:"verdict"`
	Issues    []reviews.Issue `json:"issues"`
}

// AddReview records a review (its id and issue ids assigned under the
// lock) and computes the next phase.
func (a *App) AddReview(ctx context.Context, c Caller, in AddReviewInput) (reviews.Review, error) {
	if a.remote != nil {
		return forward[reviews.Review](ctx, a, c, "reviews.add-review", in)
	}
	var out reviews.Review
	err := a.as(c).runAddReview(ctx, "baton reviews add-review", in, &out)
	return out, err
}

func (a *App) runAddReview(ctx context.Context, cmdPath string, o AddReviewInput, out *reviews.Review) error {
	in, err := o.review(a)
	if err != nil {
		return err
	}
	var rv reviews.Review
	err = a.update(ctx, cmdPath, reviews.FileName, func(st *state) error {
		if _, err := st.requireAs(workflow.AddReview, in.AgentType); err != nil {
			return err
		}
		r, err := st.reviews()
		if err != nil {
			return err
		}
		if err := st.checkReview(r, in); err != nil {
			return err
		}
		if err := st.ownItem(features.SplitIDs(Deref(in.FeatureID)), Deref(in.Branch)); err != nil {
			return err
		}
		if err := a.reviewRange(st.cfg, &in); err != nil {
			return err
		}
		if err := st.checkReviewedHead(in); err != nil {
			return err
		}
		if in.FeatureID != nil {
			if err := checkFeatureIDs(st, features.SplitIDs(*in.FeatureID)); err != nil {
				return err
			}
			in.FeatureName = featureNames(st, features.SplitIDs(*in.FeatureID))
		}

		p, _, err := st.progressOpt()
		if err != nil {
			return err
		}
		if last, ok := st.repeatedReview(r, p, in); ok {
			rv, err = st.keepRepeated(p, in, last)
			st.summary = fmt.Sprintf("review R%d repeated by a retry: not recorded again", rv.ReviewID)
			st.record = map[string]any{"repeats": rv.ReviewID}
			st.taskID = in.FeatureID
			return err
		}
		id := r.NextReviewID()
		d, ids, err := st.afterReview(r, in, id)
		if err != nil {
			return err
		}
		if in.Decision, err = json.Marshal(d); err != nil {
			return err
		}
		if rv, err = r.AddReview(in); err != nil {
			return err
		}
		if p != nil {
			if err := st.applyReview(p, in, id, d, ids); err != nil {
				return err
			}
		}
		st.touch(reviews.FileName)
		st.summary = fmt.Sprintf("added review R%d (%s): %s", rv.ReviewID, rv.Verdict, d.Reason)
		st.record = rv
		st.taskID = in.FeatureID
		return nil
	})
	if err != nil {
		return err
	}
	*out = rv
	return nil
}

// AddFix records a fix answering a review (refused past the fix-cycle
// limit).
func (a *App) AddFix(ctx context.Context, c Caller, in AddFixInput) (reviews.Fix, error) {
	if a.remote != nil {
		return forward[reviews.Fix](ctx, a, c, "reviews.add-fix", in)
	}
	var out reviews.Fix
	err := a.as(c).runAddFix(ctx, "baton reviews add-fix", in, &out)
	return out, err
}

func (a *App) runAddFix(ctx context.Context, cmdPath string, o AddFixInput, out *reviews.Fix) error {
	in, err := o.fix(a)
	if err != nil {
		return err
	}
	var fx reviews.Fix
	err = a.update(ctx, cmdPath, reviews.FileName, func(st *state) error {
		if _, err := st.require(workflow.AddFix); err != nil {
			return err
		}
		r, err := st.reviews()
		if err != nil {
			return err
		}
		rv, err := r.Review(in.ReviewID)
		if err != nil {
			return err
		}
		st.taskID = progress.Nullable(rv.Get("feature_id").String())
		if err := st.ownItem(features.SplitIDs(rv.Get("feature_id").String()), rv.Get("branch").String()); err != nil {
			return err
		}
		ref := reviewRef(rv)
		if err := st.decide(workflow.FixAnswerable(ref)); err != nil {
			return err
		}
		branch, err := workflow.FixBranch(ref, Deref(in.Branch))
		if err != nil {
			return st.decide(err)
		}
		if err := st.checkFixCommits(&in, branch, ref.ReviewedTo); err != nil {
			return err
		}
		if err := st.fixFeatures(ref, in.FeatureID); err != nil {
			return err
		}
		key := Deref(in.FeatureID)
		if key == "" {
			key = rv.Get("feature_id").String()
		}
		if key != "" {
			if err := checkFeatureIDs(st, features.SplitIDs(key)); err != nil {
				return err
			}
			if fc := st.limits().FixCycles(r.FixCount(key)); fc.Reached {
				return st.decide(workflow.FixWithinLimit(key, fc, latestWithIssues(r, features.SplitIDs(key))))
			}
		}
		if err := workflow.FixedIssues(ref.ID, reviewIssueIDs(rv), fixedIDs(in.IssuesFixed)); err != nil {
			return err
		}
		if fx, err = r.AddFix(in); err != nil {
			return err
		}
		st.touch(reviews.FileName)
		st.summary = fmt.Sprintf("added fix %s for R%d", reviews.FixLabel(fx.FixID), fx.ReviewID)
		st.record = fx
		st.taskID = fx.FeatureID
		return nil
	})
	if err != nil {
		return err
	}
	*out = fx
	return nil
}

// GetFixCount counts a feature's (or batch's) fixes against the limit.
// At the limit it returns the counts and an errs.Policy error saying what
// happens instead.
func (a *App) GetFixCount(ctx context.Context, c Caller, feature string) (FixCountResult, error) {
	if a.remote != nil {
		return forward[FixCountResult](ctx, a, c, "reviews.get-fix-count", FeatureInput{Feature: feature})
	}
	a = a.as(c)
	s, err := a.openStore(reviews.FileName)
	if err != nil {
		return FixCountResult{}, err
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return FixCountResult{}, err
	}
	r, err := readFile(ctx, a, reviews.FileName, reviewsHint, reviews.Parse)
	if err != nil {
		return FixCountResult{}, err
	}
	lim, n := cfg.Limits(), r.FixCount(feature)
	fc := lim.FixCyclesAfterDecision(n, !lim.FixCycles(n).Reached && a.decidedAtLimitHere(ctx, r, feature))
	res := fixCountResult(feature, fc)
	if !fc.Reached {
		return res, nil
	}
	return res, workflow.FixCountAtLimit(feature, fc, latestWithIssues(r, features.SplitIDs(feature)))
}

// ReviewsInit creates reviews.json (force: over an existing one, whose
// records must be kept) and returns its path.
func (a *App) ReviewsInit(ctx context.Context, c Caller, force bool) (string, error) {
	if a.remote != nil {
		return forward[string](ctx, a, c, "reviews.init", ReviewsInitInput{Force: force})
	}
	a = a.as(c)
	var path string
	a.creating = true
	err := a.update(ctx, "baton reviews init", reviews.FileName, func(st *state) error {
		if _, err := st.require(workflow.InitFiles); err != nil {
			return err
		}
		path = st.tx.Store().Path(reviews.FileName)
		if old, err := st.tx.Read(reviews.FileName); err != nil {
			return err
		} else if old != nil && !force {
			return st.emptyReviews(path) // an empty one is kept as it is
		} else if old != nil {
			cur, err := st.reviews()
			if err != nil {
				return err
			}
			if err := st.keepRecords(reviews.FileName, len(cur.Reviews())+len(cur.Fixes()), "review(s) and fix(es)"); err != nil {
				return err
			}
		}
		st.rev = reviews.New()
		st.touch(reviews.FileName)
		return nil
	})
	return path, err
}

// Reviews reads reviews.json (without the lock: a consistent file, as the
// last writer committed it).
func (a *App) Reviews(ctx context.Context, c Caller) (*reviews.File, error) {
	if a.remote != nil {
		return remoteFile(ctx, a, c, "reviews.read", reviews.Parse)
	}
	return readFile(ctx, a.as(c), reviews.FileName, reviewsHint, reviews.Parse)
}

// LastReview is the last review recorded, read without the lock.
func (a *App) LastReview(ctx context.Context, c Caller) (gjson.Result, error) {
	if a.remote != nil {
		return remoteRecord(ctx, a, c, "reviews.get-last", nil)
	}
	a = a.as(c)
	r, s, err := readFileIn(ctx, a, reviews.FileName, reviewsHint, reviews.Parse)
	if err != nil {
		return gjson.Result{}, err
	}
	rv := r.Reviews()
	if p, err := readFile(ctx, a, progress.FileName, progressHint, progress.Parse); err == nil {
		if l, ok := a.boundLane(ctx, p); ok { // a lane's session: its own item's last review, if it has one
			own := slices.DeleteFunc(slices.Clone(rv), func(r gjson.Result) bool { return itemOfReview(r) != l.Item })
			if len(own) > 0 {
				rv = own
			}
		}
	}
	if len(rv) == 0 {
		return gjson.Result{}, errs.New(errs.NotFound, "No reviews found in %s", s.Path(reviews.FileName))
	}
	return rv[len(rv)-1], nil
}

// MarkMerged marks a fix as merged to main (at mergeCommit, when given).
func (a *App) MarkMerged(ctx context.Context, c Caller, id int, mergeCommit string) error {
	if a.remote != nil {
		_, err := forward[MarkMergedResult](ctx, a, c, "reviews.mark-merged", MarkMergedInput{FixID: id, MergeCommit: mergeCommit})
		return err
	}
	a = a.as(c)
	mc, err := a.commitRef("--merge-commit", mergeCommit)
	if err != nil {
		return err
	}
	return a.update(ctx, "baton reviews mark-merged", reviews.FileName, func(st *state) error {
		if _, err := st.require(workflow.MarkMerged); err != nil {
			return err
		}
		r, err := st.reviews()
		if err != nil {
			return err
		}
		if err := r.MarkMerged(id, st.stamp(), mc); err != nil {
			return err
		}
		st.touch(reviews.FileName)
		st.summary = "marked " + reviews.FixLabel(id) + " merged"
		return nil
	})
}
