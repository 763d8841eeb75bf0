package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/features"
	"github.com/baton-cli/baton/jsondoc"
	"github.com/baton-cli/baton/progress"
	"github.com/baton-cli/baton/reviews"
	"github.com/baton-cli/baton/store"
	"github.com/baton-cli/baton/workflow"
)

const reviewsHint = "baton reviews init"

func (a *App) newReviewsCmd() *cobra.Command {
	return group("reviews", "Record and read reviews and fixes in reviews.json",
		a.newReviewsInitCmd(), a.newAddReviewCmd(), a.newAddFixCmd(), a.newGetReviewCmd(), a.newGetLastCmd(),
		a.newGetFixCountCmd(), a.newShowIssuesCmd(), a.newReviewsListCmd(), a.newNextReviewIDCmd(), a.newMarkMergedCmd(),
		a.newReviewsMergeCmd(), a.newReviewsRejectCmd())
}

// ---- reviews init

func (a *App) newReviewsInitCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use: "init", Short: "Create reviews.json", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var path string
			a.creating = true
			err := a.update(c.Context(), c.CommandPath(), reviews.FileName, func(st *state) error {
				if _, err := st.require(workflow.InitFiles); err != nil {
					return err
				}
				path = st.tx.Store().Path(reviews.FileName)
				if old, err := st.tx.Read(reviews.FileName); err != nil {
					return err
				} else if old != nil && !force {
					return errs.New(errs.Conflict, "%s already exists. Use --force to overwrite.", path)
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
			if err != nil {
				return err
			}
			return a.emit(map[string]string{"initialized": path}, func(w io.Writer) { printf(w, "SUCCESS: Initialized %s", path) })
		},
	}
	c.Flags().BoolVar(&force, "force", false, "overwrite an existing reviews.json")
	return c
}

// readArg reads a JSON-or-file argument: inline JSON, "-" for stdin, or the
// path of a file holding the JSON.
func (a *App) readArg(flag, v string) ([]byte, error) {
	t := strings.TrimSpace(v)
	switch {
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

type addReviewOpts struct {
	Agent, FeatureID, Branch, Verdict, Summary, Issues string
	CommitFrom, CommitTo                               string
	Metrics                                            string
	Coverage                                           float64
	HasCoverage                                        bool
}

func (a *App) newAddReviewCmd() *cobra.Command {
	var o addReviewOpts
	c := &cobra.Command{
		Use:   "add-review",
		Short: "Record a review (id and issue ids assigned under the lock)",
		Long: `Record a review. --issues takes JSON (inline, a file path, or - for stdin) either grouped
as the seed stores it — {"critical":[],"major":[{"description":"..."}],"minor":[],"suggestions":[]} —
or as a flat list of issues each with "severity". Issue ids (R<review>-M<n>, A<review>-... for
architecture reviews) are assigned when missing and checked when given.
Verdicts: PASS, PASS_WITH_COMMENTS, REQUEST_CHANGES, REJECT (APPROVE/APPROVED mean PASS).
In a git repository commit_range is recorded from git: main's merge base with the branch ..
the branch head; --commit-from/--commit-to must agree with it (a branch that does not exist
keeps them as given, with a warning).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.HasCoverage = c.Flags().Changed("coverage")
			return a.runAddReview(c.Context(), c.CommandPath(), o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Agent, "agent-type", "a", "", "REVIEW or ARCHITECTURE (required)")
	f.StringVar(&o.FeatureID, "feature-id", "", "feature id or batch (F001,F002); none for architecture reviews")
	f.StringVarP(&o.Branch, "branch", "b", "", "branch reviewed (required for REVIEW)")
	f.StringVarP(&o.Verdict, "verdict", "v", "", "PASS, PASS_WITH_COMMENTS, REQUEST_CHANGES or REJECT (required)")
	f.StringVarP(&o.Summary, "summary", "s", "", "review summary (required)")
	f.StringVar(&o.Issues, "issues", "", "issues as JSON, a JSON file, or - for stdin")
	f.StringVar(&o.CommitFrom, "commit-from", "", "first commit reviewed (main's merge base)")
	f.StringVar(&o.CommitTo, "commit-to", "", "last commit reviewed (branch head)")
	f.StringVar(&o.Metrics, "metrics", "", "architecture reviews: metrics JSON (total_files, test_coverage_percent, ...)")
	f.Float64Var(&o.Coverage, "coverage", 0, "architecture reviews: test coverage percent (default: metrics.test_coverage_percent)")
	for _, r := range []string{"agent-type", "verdict", "summary"} {
		_ = c.MarkFlagRequired(r)
	}
	return c
}

func (o addReviewOpts) review(a *App) (reviews.NewReview, error) {
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
	if in.AgentType == "REVIEW" && in.Branch == nil {
		return in, errs.New(errs.Usage, "--branch: a REVIEW names the branch it reviewed (an ARCHITECTURE review may omit it)")
	}
	if in.AgentType == "REVIEW" && in.FeatureID == nil && !strings.HasPrefix(*in.Branch, "refactor/") {
		return in, errs.New(errs.Usage, "--feature-id: a REVIEW names the feature it reviewed (only an ARCHITECTURE_REFACTOR review of a refactor/ branch has none)")
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

func (a *App) runAddReview(ctx context.Context, cmdPath string, o addReviewOpts) error {
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
		if err := st.checkPassIssues(in); err != nil {
			return err
		}
		if err := st.checkReviewedWork(in); err != nil {
			return err
		}
		if err := st.checkPassedWork(in); err != nil {
			return err
		}
		if err := a.reviewRange(st.cfg, &in); err != nil {
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
		id := r.NextReviewID()
		d, err := st.afterReview(p, r, in, id)
		if err != nil {
			return err
		}
		if in.Decision, err = json.Marshal(d); err != nil {
			return err
		}
		if rv, err = r.AddReview(in); err != nil {
			return err
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
	return a.emit(rv, func(w io.Writer) {
		printf(w, "SUCCESS: Added review R%d", rv.ReviewID)
		printJSON(w, rv)
	})
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

type addFixOpts struct {
	ReviewID                                int
	FeatureID, Branch                       string
	IssuesFixed, IssuesDeferred, TestsAdded string
}

func (a *App) newAddFixCmd() *cobra.Command {
	var o addFixOpts
	c := &cobra.Command{
		Use:   "add-fix",
		Short: "Record a fix answering a review (refused past the fix-cycle limit)",
		Long: `Record a fix. --issues-fixed is a JSON list (inline, a file, or -) of
{"issue_id":"R1-M1","fix_description":"...","commit":"abc123"} objects or plain issue ids; each must
be an issue of the review named by --review-id. Feature and branch default to the review's.
In a git repository each "commit" must exist, be on the fix's branch and not on main.
The fix id is printed as FIX-<n>.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runAddFix(c.Context(), c.CommandPath(), o) },
	}
	f := c.Flags()
	f.VarP(reviewIDFlag(&o.ReviewID), "review-id", "r", "review answered: 3 or R3 (required)")
	f.StringVar(&o.FeatureID, "feature-id", "", "feature id or batch (default: the review's)")
	f.StringVarP(&o.Branch, "branch", "b", "", "branch with the fixes (default: the review's)")
	f.StringVar(&o.IssuesFixed, "issues-fixed", "", "issues fixed: JSON list, JSON file, or -")
	f.StringVar(&o.IssuesDeferred, "issues-deferred", "", "issues deferred: JSON list, JSON file, or -")
	f.StringVar(&o.TestsAdded, "tests-added", "", "comma-separated names of tests added")
	_ = c.MarkFlagRequired("review-id")
	return c
}

func (o addFixOpts) fix(a *App) (reviews.NewFix, error) {
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

func (a *App) runAddFix(ctx context.Context, cmdPath string, o addFixOpts) error {
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
		if reviews.VerdictOf(rv) == "REJECT" || rv.Get("decision.reject").Bool() {
			return st.refuse(errs.New(errs.Policy, "review R%d rejected the work: its features go back to IMPLEMENT, and no fix answers a rejected review", in.ReviewID))
		}
		branch, err := st.fixBranch(rv, in.Branch)
		if err != nil {
			return err
		}
		if err := st.checkFixCommits(&in, branch, rv.Get("commit_range.to").String()); err != nil {
			return err
		}
		if err := st.fixFeatures(rv, in.FeatureID); err != nil {
			return err
		}
		key := deref(in.FeatureID)
		if key == "" {
			key = rv.Get("feature_id").String()
		}
		if key != "" {
			if err := checkFeatureIDs(st, features.SplitIDs(key)); err != nil {
				return err
			}
			if n := r.FixCount(key); n >= st.cfg.MaxFixCycles {
				return st.refuse(errs.New(errs.Policy, "fix-cycle limit reached for %s: %d of %d fixes recorded. No more fixes; %s", key, n, st.cfg.MaxFixCycles, limitDecision(r, key)))
			}
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
	return a.emit(fx, func(w io.Writer) {
		printf(w, "SUCCESS: Added fix %s", reviews.FixLabel(fx.FixID))
		printJSON(w, fx)
	})
}

// limitDecision says what the seed decides at the fix-cycle limit, from the
// feature's latest review.
func limitDecision(r *reviews.File, featureIDs string) string {
	want := map[string]bool{}
	for _, id := range features.SplitIDs(featureIDs) {
		want[id] = true
	}
	all := r.Reviews()
	for i := len(all) - 1; i >= 0; i-- {
		hit := false
		for _, id := range features.SplitIDs(all[i].Get("feature_id").String()) {
			hit = hit || want[id]
		}
		if !hit {
			continue
		}
		if reviews.Blocking(reviews.ReadIssues(all[i].Get("issues"))) {
			return "critical or major issues remain in review R" + all[i].Get("review_id").String() + ", so the decision is REJECT (re-implement)."
		}
		return "only minor issues and suggestions remain in review R" + all[i].Get("review_id").String() + ", so the decision is PASS_WITH_COMMENTS (merge, leftovers recorded as tech debt)."
	}
	return "the reviewer decides by severity: REJECT if critical or major issues remain, else PASS_WITH_COMMENTS."
}

// ---- reviews get-review

func (a *App) newGetReviewCmd() *cobra.Command {
	var field string
	c := &cobra.Command{
		Use: "get-review ID", Short: "Print a review (3 or R3), or one field of it", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := idArg("ID", args[0], reviews.ParseReviewID)
			if err != nil {
				return err
			}
			r, err := readFile(c.Context(), a, reviews.FileName, reviewsHint, reviews.Parse)
			if err != nil {
				return err
			}
			rv, err := r.Review(id)
			if err != nil {
				return err
			}
			return a.emitRecord(rv, field)
		},
	}
	c.Flags().StringVar(&field, "field", "", "print one field's raw value (gjson path)")
	return c
}

// emitRecord prints a stored record, or one field of it.
func (a *App) emitRecord(r gjson.Result, field string) error {
	if field != "" {
		return a.recordField(r, field, "review", "fix", "feature")
	}
	return a.emit(r.Value(), func(w io.Writer) { printRaw(w, []byte(r.Raw)) })
}

// ---- reviews get-last

func (a *App) newGetLastCmd() *cobra.Command {
	var field string
	c := &cobra.Command{
		Use: "get-last", Short: "Print the last review, or one field of it", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			m, err := a.mapFile(c.Context(), reviews.FileName, reviewsHint, validates(reviews.Parse))
			if err != nil {
				return err
			}
			defer m.release()
			if last, ok := m.last("reviews"); ok && last != nil {
				return a.emitRecord(gjson.ParseBytes(last), field)
			}
			var last gjson.Result
			gjson.GetBytes(m.data, "reviews").ForEach(func(_, v gjson.Result) bool { last = v; return true })
			if !last.Exists() {
				if err := m.invalid(); err != nil {
					return err
				}
				return errs.New(errs.NotFound, "No reviews found in %s", m.s.Path(reviews.FileName))
			}
			return a.emitRecord(last, field)
		},
	}
	c.Flags().StringVar(&field, "field", "", "print one field's raw value (review_id, verdict, issues, commit_range.to, ...)")
	return c
}

// ---- reviews get-fix-count

type fixCountResult struct {
	FeatureID    string   `json:"-"`
	Features     []string `json:"features"`
	FixCount     int      `json:"fix_count"`
	Remaining    int      `json:"remaining"`
	MaxFixCycles int      `json:"max_fix_cycles"`
	LimitReached bool     `json:"limit_reached"`
}

func (a *App) newGetFixCountCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "get-fix-count FEATURE",
		Short: "Print FIX_COUNT and REMAINING for a feature or batch (exit 3 at the limit)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return a.runGetFixCount(c.Context(), args[0])
		},
	}
}

func (a *App) runGetFixCount(ctx context.Context, feature string) error {
	s, err := a.openStore(reviews.FileName)
	if err != nil {
		return err
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return err
	}
	r, err := readFile(ctx, a, reviews.FileName, reviewsHint, reviews.Parse)
	if err != nil {
		return err
	}
	res := fixCountOf(r, feature, cfg)
	var limit error
	if res.LimitReached {
		limit = errs.New(errs.Policy, "Maximum fix attempts reached (%d of %d) for %s - %s", res.FixCount, res.MaxFixCycles, feature, limitDecision(r, feature))
		if a.g.JSON { // one error object, the counts as its details
			return withDetails(limit, res)
		}
	}
	if res.Remaining == 1 && !a.g.JSON { // under --json: a warning inside the document
		defer a.warn("FINAL FIX ATTEMPT - Next failure triggers mandatory decision")
	} else if res.Remaining == 1 {
		a.warn("FINAL FIX ATTEMPT - Next failure triggers mandatory decision")
	}
	if err := a.emit(res, func(w io.Writer) {
		printf(w, "FIX_COUNT: %d", res.FixCount)
		printf(w, "REMAINING: %d", res.Remaining)
	}); err != nil {
		return err
	}
	return limit
}

func fixCountOf(r *reviews.File, feature string, cfg store.Config) fixCountResult {
	n := r.FixCount(feature)
	rem := cfg.MaxFixCycles - n
	if rem < 0 {
		rem = 0
	}
	return fixCountResult{FeatureID: feature, Features: nonNil(features.SplitIDs(feature)), FixCount: n, Remaining: rem, MaxFixCycles: cfg.MaxFixCycles, LimitReached: n >= cfg.MaxFixCycles}
}

// ---- reviews show-issues

type showIssuesResult struct {
	ReviewID  int             `json:"review_id"`
	FeatureID string          `json:"-"`
	Features  []string        `json:"features"`
	Verdict   string          `json:"verdict"`
	Issues    []reviews.Issue `json:"issues"`
}

func (a *App) newShowIssuesCmd() *cobra.Command {
	return &cobra.Command{
		Use: "show-issues", Short: "Show the last review's issues, by severity, for fixing", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			r, err := readFile(c.Context(), a, reviews.FileName, reviewsHint, reviews.Parse)
			if err != nil {
				return err
			}
			last, err := r.Last()
			if err != nil {
				return err
			}
			res := showIssuesResult{ReviewID: int(last.Get("review_id").Int()), FeatureID: last.Get("feature_id").String(), Features: nonNil(features.SplitIDs(last.Get("feature_id").String())), Verdict: last.Get("verdict").String(), Issues: reviews.ReadIssues(last.Get("issues"))}
			if res.FeatureID == "" {
				res.FeatureID = "ARCHITECTURE"
			}
			if res.Issues == nil {
				res.Issues = []reviews.Issue{}
			}
			return a.emit(res, func(w io.Writer) { writeIssues(w, res) })
		},
	}
}

func writeIssues(w io.Writer, res showIssuesResult) {
	if len(res.Issues) == 0 {
		printf(w, "NO_ISSUES: Review has no issues to fix")
		return
	}
	printf(w, "=== ISSUES TO FIX ===")
	printf(w, "Review: R%d", res.ReviewID)
	printf(w, "Feature: %s", res.FeatureID)
	printf(w, "Verdict: %s", res.Verdict)
	printf(w, "")
	for _, sev := range reviews.Severities {
		var group []reviews.Issue
		for _, is := range res.Issues {
			if is.Severity == sev {
				group = append(group, is)
			}
		}
		if len(group) == 0 {
			continue
		}
		printf(w, "--- %s (%d) ---", strings.ToUpper(strings.TrimSuffix(sev, "s")), len(group))
		for _, is := range group {
			printf(w, "  [%s] %s", is.ID, is.Description)
			if is.Location != "" {
				printf(w, "    Location: %s", is.Location)
			}
			if is.Suggestion != "" {
				printf(w, "    Fix: %s", is.Suggestion)
			}
			printf(w, "")
		}
	}
}

// ---- reviews list

func (a *App) newReviewsListCmd() *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List every review and fix", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			r, err := readFile(c.Context(), a, reviews.FileName, reviewsHint, reviews.Parse)
			if err != nil {
				return err
			}
			doc := map[string][]any{"reviews": {}, "fixes": {}}
			for _, v := range r.Reviews() {
				doc["reviews"] = append(doc["reviews"], v.Value())
			}
			for _, v := range r.Fixes() {
				doc["fixes"] = append(doc["fixes"], v.Value())
			}
			return a.emit(doc, func(w io.Writer) {
				printf(w, "=== REVIEWS ===")
				for _, v := range r.Reviews() {
					printf(w, "%s", reviews.ListLine(v))
				}
				printf(w, "\n=== FIXES ===")
				for _, v := range r.Fixes() {
					printf(w, "%s", reviews.FixListLine(v))
				}
			})
		},
	}
}

// ---- reviews next-review-id

func (a *App) newNextReviewIDCmd() *cobra.Command {
	return &cobra.Command{
		Use: "next-review-id", Short: "Print the id the next review will get", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			r, err := readFile(c.Context(), a, reviews.FileName, reviewsHint, reviews.Parse)
			if err != nil {
				return err
			}
			id := r.NextReviewID()
			return a.emit(map[string]int{"next_review_id": id}, func(w io.Writer) { printf(w, "%d", id) })
		},
	}
}

// ---- reviews mark-merged

func (a *App) newMarkMergedCmd() *cobra.Command {
	var mergeCommit string
	c := &cobra.Command{
		Use: "mark-merged FIX_ID", Short: "Mark a fix (3 or FIX-3) as merged to main", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := idArg("FIX_ID", args[0], reviews.ParseFixID)
			if err != nil {
				return err
			}
			mc, err := a.commitRef("--merge-commit", mergeCommit)
			if err != nil {
				return err
			}
			err = a.update(c.Context(), c.CommandPath(), reviews.FileName, func(st *state) error {
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
			if err != nil {
				return err
			}
			label := reviews.FixLabel(id)
			return a.emit(map[string]any{"fix_id": id, "merged_to_main": true}, func(w io.Writer) {
				printf(w, "SUCCESS: Fix %s marked as merged", label)
			})
		},
	}
	c.Flags().StringVar(&mergeCommit, "merge-commit", "", "the merge commit on main")
	return c
}
