package cli

import (
	"context"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/reviews"
)

func (a *App) newReviewsCmd() *cobra.Command {
	return group("reviews", "Record and read reviews and fixes in reviews.json",
		a.newReviewsInitCmd(), a.newAddReviewCmd(), a.newAddFixCmd(),
		a.newGetReviewCmd(), a.newGetLastCmd(), a.newGetFixCountCmd(),
		a.newShowIssuesCmd(), a.newReviewsListCmd(), a.newNextReviewIDCmd(),
		a.newMarkMergedCmd(), a.newReviewsMergeCmd(), a.newReviewsRejectCmd())
}

// ---- reviews init

func (a *App) newReviewsInitCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use: "init", Short: "Create reviews.json", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			path, err := a.app.ReviewsInit(c.Context(), a.caller(), force)
			if err != nil {
				return err
			}
			return a.emit(map[string]string{"initialized": path}, func(w io.Writer) { printf(w, "SUCCESS: Initialized %s", path) })
		},
	}
	c.Flags().BoolVar(&force, "force", false, "overwrite an existing reviews.json")
	return c
}

func (a *App) newAddReviewCmd() *cobra.Command {
	var o app.AddReviewInput
	c := &cobra.Command{
		Use:   "add-review",
		Short: "Record a review (id and issue ids assigned under the lock)",
		Long: `Record a review. --issues takes JSON (inline, a file path, or - for stdin) either grouped
as reviews.json stores it — {"critical":[],"major":[{"description":"..."}],"minor":[],"suggestions":[]} —
or as a flat list of issues each with "severity". Issue ids (R<review>-M<n>, A<review>-... for
architecture reviews) are assigned when missing and checked when given.
Verdicts: PASS, PASS_WITH_COMMENTS, REQUEST_CHANGES, REJECT (APPROVE/APPROVED mean PASS).
In a git repository commit_range is recorded from git: main's merge base with the branch ..
the branch head; --commit-from/--commit-to must agree with it (a branch that does not exist
keeps them as given, with a warning).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.HasCoverage = c.Flags().Changed("coverage")
			rv, err := a.app.AddReview(c.Context(), a.caller(), o)
			if err != nil {
				return err
			}
			return a.emit(rv, func(w io.Writer) {
				printf(w, "SUCCESS: Added review R%d", rv.ReviewID)
				printJSON(w, rv)
			})
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

func (a *App) newAddFixCmd() *cobra.Command {
	var o app.AddFixInput
	c := &cobra.Command{
		Use:   "add-fix",
		Short: "Record a fix answering a review (refused past the fix-cycle limit)",
		Long: `Record a fix. --issues-fixed is a JSON list (inline, a file, or -) of
{"issue_id":"R1-M1","fix_description":"...","commit":"abc123"} objects or plain issue ids; each must
be an issue of the review named by --review-id. Feature and branch default to the review's.
In a git repository each "commit" must exist, be on the fix's branch and not on main.
The fix id is printed as FIX-<n>.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fx, err := a.app.AddFix(c.Context(), a.caller(), o)
			if err != nil {
				return err
			}
			return a.emit(fx, func(w io.Writer) {
				printf(w, "SUCCESS: Added fix %s", reviews.FixLabel(fx.FixID))
				printJSON(w, fx)
			})
		},
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
			r, err := a.app.Reviews(c.Context(), a.caller())
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
			last, err := a.app.LastReview(c.Context(), a.caller())
			if err != nil {
				return err
			}
			return a.emitRecord(last, field)
		},
	}
	c.Flags().StringVar(&field, "field", "", "print one field's raw value (review_id, verdict, issues, commit_range.to, ...)")
	return c
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

func (a *App) newShowIssuesCmd() *cobra.Command {
	return &cobra.Command{
		Use: "show-issues", Short: "Show the last review's issues, by severity, for fixing", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			last, err := a.app.LastReview(c.Context(), a.caller()) // a lane's session: its own item's
			if err != nil {
				return err
			}
			res := app.ShowIssuesResult{ReviewID: int(last.Get("review_id").Int()), FeatureID: last.Get("feature_id").String(), Features: app.NonNil(features.SplitIDs(last.Get("feature_id").String())), Verdict: last.Get("verdict").String(), Issues: reviews.ReadIssues(last.Get("issues"))}
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

// ---- reviews list

func (a *App) newReviewsListCmd() *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List every review and fix", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			r, err := a.app.Reviews(c.Context(), a.caller())
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
			r, err := a.app.Reviews(c.Context(), a.caller())
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
			if err := a.app.MarkMerged(c.Context(), a.caller(), id, mergeCommit); err != nil {
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

func (a *App) runGetFixCount(ctx context.Context, feature string) error {
	res, limit := a.app.GetFixCount(ctx, a.caller(), feature)
	if limit != nil && !errs.Is(limit, errs.Policy) {
		return limit
	}
	if limit != nil && a.g.JSON { // one error object, the counts as its details
		return withDetails(limit, res)
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

func writeIssues(w io.Writer, res app.ShowIssuesResult) {
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
