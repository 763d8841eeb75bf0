package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
)

func (a *App) newFeaturesCmd() *cobra.Command {
	return group("features", "Read and update feature_list.json",
		a.newNextCmd(), a.newNextCandidatesCmd(), a.newFeatureGetCmd(),
		a.newPassCmd(), a.newPassBatchCmd(), a.newFailCmd(),
		a.newFeaturesListCmd(), a.newStatsCmd(), a.newNextIDCmd(),
		a.newDebtCountCmd(), a.newAppendCmd())
}

// ---- features next

func (a *App) newNextCmd() *cobra.Command {
	var kind string
	c := &cobra.Command{
		Use: "next", Short: "Print the first pending item whose depends_on pass (optionally of one type)", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if kind != "" {
				k, err := features.NormalizeKind(kind)
				if err != nil {
					return err
				}
				kind = k
			}
			f, err := a.app.Features(c.Context(), a.caller())
			if err != nil {
				return err
			}
			pending := f.ReadyFirst(kind)
			if len(pending) == 0 {
				return a.noMore(kind)
			}
			raw, _ := f.Raw(pending[0].ID)
			return a.emit(gjson.ParseBytes(raw).Value(), func(w io.Writer) { printRaw(w, raw) })
		},
	}
	c.Flags().StringVarP(&kind, "type", "t", "", "BUG, DEBT or FEAT")
	return c
}

// noMore reports that nothing is pending: a notice on stderr, exit 0 (and
// under --json a document saying so).
func (a *App) noMore(kind string) error {
	if kind == "" {
		a.notice("NO_MORE_FEATURES: All features are passing!")
	} else {
		a.notice("NO_MORE_%s: All %ss are passing!", kind, kind)
	}
	if a.g.JSON {
		return a.writeJSON(a.env.Stdout, map[string]any{"done": true, "type": kind})
	}
	return nil
}

func (a *App) newNextCandidatesCmd() *cobra.Command {
	var count int
	c := &cobra.Command{
		Use: "next-candidates", Short: "Print up to N pending features to choose a batch from", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if count < 1 {
				return errs.New(errs.Usage, "--count: must be at least 1, got %d", count)
			}
			f, err := a.app.Features(c.Context(), a.caller())
			if err != nil {
				return err
			}
			pending := f.ReadyFirst("")
			if len(pending) == 0 {
				return a.noMore("")
			}
			res := app.Candidates{TotalPending: len(pending), Features: []any{},
				Instruction: "Select up to 5 RELATED features to implement together. Choose features that share the same component, category, or have dependencies on each other."}
			for i := 0; i < len(pending) && i < count; i++ {
				raw, _ := f.Raw(pending[i].ID)
				res.Features = append(res.Features, gjson.ParseBytes(raw).Value())
			}
			res.CandidatesShown = len(res.Features)
			return a.emit(res, func(w io.Writer) { printJSON(w, res) })
		},
	}
	c.Flags().IntVarP(&count, "count", "c", 15, "how many candidates")
	return c
}

// ---- features get

func (a *App) newFeatureGetCmd() *cobra.Command {
	var field string
	c := &cobra.Command{
		Use: "get ID", Short: "Print a feature", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f, err := a.app.Features(c.Context(), a.caller())
			if err != nil {
				return err
			}
			raw, ok := f.Raw(args[0])
			if !ok {
				return errs.New(errs.NotFound, "Feature %s not found (see 'baton features list')", args[0])
			}
			return a.emitRecord(gjson.ParseBytes(raw), field)
		},
	}
	c.Flags().StringVar(&field, "field", "", "print one field's raw value (gjson path)")
	return c
}

func (a *App) newPassCmd() *cobra.Command {
	return &cobra.Command{
		Use: "pass ID", Short: "Mark a feature passing", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			res, err := a.app.FeaturePass(c.Context(), a.caller(), args[0])
			if err != nil {
				return err
			}
			id := res.Passed[0]
			return a.emit(res, func(w io.Writer) {
				printf(w, "SUCCESS: Feature %s marked as PASSING", id)
			})
		},
	}
}

func (a *App) newPassBatchCmd() *cobra.Command {
	return &cobra.Command{
		Use: "pass-batch IDS", Short: `Mark several features passing, all or nothing ("F001,F002")`, Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ids := features.SplitIDs(args[0])
			if len(ids) == 0 {
				return errs.New(errs.Usage, "IDS: no feature ids in %q (write \"F001,F002\")", args[0])
			}
			res, err := a.app.FeaturesPassBatch(c.Context(), a.caller(), ids)
			if err != nil {
				return err
			}
			passed := res.Passed
			return a.emit(res, func(w io.Writer) {
				printf(w, "SUCCESS: Marked %d features as PASSING: %s", len(passed), strings.Join(passed, ", "))
			})
		},
	}
}

func (a *App) newFailCmd() *cobra.Command {
	var reason string
	c := &cobra.Command{
		Use: "fail ID", Short: "Mark a feature failing (a regression)", Args: cobra.ExactArgs(1),
		Long: `Mark a feature failing (a regression) and say why with -r/--failure-reason (the
predecessor's 'fail ID -r REASON').`,
		RunE: func(c *cobra.Command, args []string) error {
			res, err := a.app.FeatureFail(c.Context(), a.caller(), app.FailInput{ID: args[0], Reason: reason})
			if err != nil {
				return err
			}
			id, reason := res.Failed[0], res.Reason
			return a.emit(res, func(w io.Writer) {
				printf(w, "SUCCESS: Feature %s marked as FAILING - %s", id, reason)
			})
		},
	}
	c.Flags().StringVarP(&reason, "failure-reason", "r", "", "why it fails (required)")
	return c
}

// ---- features list

func (a *App) newFeaturesListCmd() *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List features by priority: bugs, tech debt, features, passing", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			f, err := a.app.Features(c.Context(), a.caller())
			if err != nil {
				return err
			}
			all := f.All()
			if all == nil {
				all = []features.Feature{}
			}
			records := make([]any, 0, len(all))
			for _, it := range all {
				raw, _ := f.Raw(it.ID)
				records = append(records, gjson.ParseBytes(raw).Value())
			}
			return a.emit(map[string]any{"features": records}, func(w io.Writer) { writeFeatureList(w, all) })
		},
	}
}

// ---- features stats

func (a *App) newStatsCmd() *cobra.Command {
	return &cobra.Command{
		Use: "stats", Short: "Print counts by type and the next work item", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := a.app.FeatureStats(c.Context(), a.caller())
			if err != nil {
				return err
			}
			return a.emit(s, func(w io.Writer) {
				printf(w, "Features: %d/%d passing", s.Features.Passing, s.Features.Total)
				printf(w, "Bugs: %d/%d resolved", s.Bugs.Passing, s.Bugs.Total)
				printf(w, "Tech Debt: %d/%d resolved", s.TechDebt.Passing, s.TechDebt.Total)
				printf(w, "Total: %d/%d (%d%%)", s.All.Passing, s.All.Total, s.Percent)
				printf(w, "Next: %s", s.Next)
			})
		},
	}
}

// ---- features next-id

func (a *App) newNextIDCmd() *cobra.Command {
	var kind string
	c := &cobra.Command{
		Use: "next-id", Short: "Print the next free id of a type (FEAT-004, BUG-001, DEBT-002)", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			k, err := features.NormalizeKind(kind)
			if err != nil {
				return err
			}
			f, err := a.app.Features(c.Context(), a.caller())
			if err != nil {
				return err
			}
			id := f.NextID(k)
			return a.emit(map[string]string{"next_id": id}, func(w io.Writer) { printf(w, "%s", id) })
		},
	}
	c.Flags().StringVarP(&kind, "type", "t", "", "FEAT, BUG or DEBT (required)")
	_ = c.MarkFlagRequired("type")
	return c
}

// ---- features debt-count

func (a *App) newDebtCountCmd() *cobra.Command {
	return &cobra.Command{
		Use: "debt-count", Short: "Print how many tech-debt items are pending", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			f, err := a.app.Features(c.Context(), a.caller())
			if err != nil {
				return err
			}
			n := len(f.Pending("DEBT"))
			return a.emit(map[string]int{"debt_count": n}, func(w io.Writer) { printf(w, "%d", n) })
		},
	}
}

// ---- features append

func (a *App) newAppendCmd() *cobra.Command {
	var entries, source string
	c := &cobra.Command{
		Use:   "append",
		Short: "Append features, bugs or tech debt (a JSON list; ids assigned when missing)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			res, err := a.app.FeaturesAppend(c.Context(), a.caller(), app.AppendInput{Entries: entries, Source: source})
			if err != nil {
				return err
			}
			added := res.Added
			return a.emit(res, func(w io.Writer) {
				printf(w, "SUCCESS: Appended %d entries: %s", len(added), strings.Join(added, ", "))
			})
		},
	}
	c.Flags().StringVarP(&entries, "entries", "e", "", "JSON list of entries (inline, a file, or -) (required)")
	c.Flags().StringVarP(&source, "source-appspec", "s", "", "where the entries came from (required)")
	_ = c.MarkFlagRequired("entries")
	_ = c.MarkFlagRequired("source-appspec")
	return c
}

func writeFeatureList(w io.Writer, all []features.Feature) {
	var bugs, debt, feats, passing []features.Feature
	for _, it := range all {
		switch {
		case it.Passes:
			passing = append(passing, it)
		case it.Kind() == "BUG":
			bugs = append(bugs, it)
		case it.Kind() == "DEBT":
			debt = append(debt, it)
		default:
			feats = append(feats, it)
		}
	}
	section := func(title string, items []features.Feature, tag func(features.Feature) string) {
		if len(items) == 0 {
			return
		}
		printf(w, "%s", title)
		for _, it := range items {
			printf(w, "%s: %s %s", it.ID, it.Name, tag(it))
		}
		printf(w, "")
	}
	pending := func(features.Feature) string { return "[pending]" }
	section("=== BUGS (priority) ===", bugs, pending)
	section(fmt.Sprintf("=== TECH DEBT (%d items) ===", len(debt)), debt, func(it features.Feature) string {
		src := "unknown"
		if it.SourceReview != nil {
			src = fmt.Sprint(it.SourceReview)
		}
		return "[pending] (from " + src + ")"
	})
	section("=== FEATURES ===", feats, pending)
	section("=== PASSING ===", passing, func(features.Feature) string { return "[pass]" })
	printf(w, "Summary: %d bugs, %d tech debt, %d features pending, %d passing", len(bugs), len(debt), len(feats), len(passing))
}
