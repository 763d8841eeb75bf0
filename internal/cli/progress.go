package cli

import (
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/progress"
)

func (a *App) newProgressCmd() *cobra.Command {
	return group("progress", "Read and append to progress.json (status and session history)",
		a.newProgressInitCmd(), a.newAddSessionCmd(), a.newUpdateStatusCmd(),
		a.newGetStatusCmd(), a.newGetSessionCmd(), a.newGetReviewTypeCmd(),
		a.newNextSessionIDCmd(), a.newProgressListCmd())
}

func (a *App) newProgressInitCmd() *cobra.Command {
	var o app.ProgressInitInput
	c := &cobra.Command{
		Use: "init", Short: "Create progress.json", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			out, err := a.app.ProgressInit(c.Context(), a.caller(), o)
			if err != nil {
				return err
			}
			return a.emit(gjson.ParseBytes(out.Data).Value(), func(w io.Writer) {
				printf(w, "SUCCESS: Initialized %s", out.Path)
				printRaw(w, out.Data)
			})
		},
	}
	c.Flags().StringVarP(&o.Name, "project-name", "n", "", "project name (required)")
	c.Flags().IntVarP(&o.Count, "feature-count", "c", 0, "total features (recomputed from feature_list.json when it exists)")
	c.Flags().BoolVar(&o.Force, "force", false, "overwrite an existing progress.json")
	_ = c.MarkFlagRequired("project-name")
	_ = c.MarkFlagRequired("feature-count")
	return c
}

func (a *App) newAddSessionCmd() *cobra.Command {
	var o app.AddSessionInput
	var feature, branch string
	c := &cobra.Command{
		Use:   "add-session",
		Short: "Record a finished session (id assigned under the lock)",
		Long: `Record a finished session. The id is the next one, assigned under the lock.
--commits takes "hash:message" values, several after one flag as the predecessor did.
--commit-to defaults to HEAD. --current-feature/--current-branch accept "null" to clear.
In a git repository the session's commits are recorded from git: the commits of
--commit-from..--commit-to (git rev-list, oldest first); without --commit-from, on a branch
other than main, the range starts at the branch's merge base with main. --commits values
must be among them.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 && !c.Flags().Changed("commits") {
				return errs.New(errs.Usage, "unexpected argument %q (commits go after --commits)", args[0])
			}
			o.Commits = append(o.Commits, args...)
			if c.Flags().Changed("current-feature") {
				o.CurrentFeature = &feature
			}
			if c.Flags().Changed("current-branch") {
				o.CurrentBranch = &branch
			}
			added, err := a.app.AddSession(c.Context(), a.caller(), o)
			if err != nil {
				return err
			}
			return a.emit(added, func(w io.Writer) {
				printf(w, "SUCCESS: Added session %d", added.SessionID)
				printJSON(w, added)
			})
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Agent, "agent-type", "a", "", "agent type: "+strings.Join(progress.AgentTypes, ", ")+" (required)")
	f.StringVarP(&o.Summary, "summary", "s", "", "what the session did (required)")
	f.StringVarP(&o.Outcome, "outcome", "o", "", "SUCCESS, READY_FOR_REVIEW, NEEDS_FIX, REJECTED or ERROR (APPROVED, REQUEST_CHANGES, PASS_WITH_COMMENTS, REJECT accepted) (required)")
	f.StringVar(&o.Features, "features", "", "comma-separated feature ids touched")
	f.StringArrayVar(&o.Commits, "commits", nil, `commits as "hash:message" (several may follow)`)
	f.StringVar(&o.CommitFrom, "commit-from", "", "first commit of the range (the commit before the session's work)")
	f.StringVar(&o.CommitTo, "commit-to", "", "last commit of the range (default HEAD)")
	f.StringVar(&o.StartedAt, "started-at", "", "when the session started, ISO 8601 (default now)")
	f.StringVar(&o.NextPhase, "next-phase", "", "next phase: "+strings.Join(progress.Phases, ", "))
	f.StringVar(&feature, "current-feature", "", `set the current feature ("null" clears)`)
	f.StringVar(&branch, "current-branch", "", `set the current branch ("null" clears)`)
	for _, r := range []string{"agent-type", "summary", "outcome"} {
		_ = c.MarkFlagRequired(r)
	}
	return c
}

func (a *App) newUpdateStatusCmd() *cobra.Command {
	var o app.UpdateStatusInput
	var feature, branch string
	c := &cobra.Command{
		Use: "update-status", Short: "Update the current phase, feature or branch", Args: cobra.NoArgs,
		Long: `Update the current phase, feature or branch. The counters are computed from
feature_list.json and reviews.json; --features-completed and --features-passing are accepted
for compatibility, and a value that disagrees with the computed one is reported and ignored.`,
		RunE: func(c *cobra.Command, _ []string) error {
			if c.Flags().Changed("feature") {
				o.Feature = &feature
			}
			if c.Flags().Changed("branch") {
				o.Branch = &branch
			}
			o.HasCompleted = c.Flags().Changed("features-completed")
			o.HasPassing = c.Flags().Changed("features-passing")
			status, err := a.app.UpdateStatus(c.Context(), a.caller(), o)
			if err != nil {
				return err
			}
			return a.emit(gjson.ParseBytes(status).Value(), func(w io.Writer) {
				printf(w, "SUCCESS: Status updated")
				printRaw(w, status)
			})
		},
	}
	f := c.Flags()
	f.StringVar(&o.Phase, "phase", "", "current phase: "+strings.Join(progress.Phases, ", "))
	f.StringVar(&feature, "feature", "", `current feature ("null" clears)`)
	f.StringVar(&branch, "branch", "", `current branch ("null" clears)`)
	f.IntVar(&o.Completed, "features-completed", 0, "ignored: computed from the files")
	f.IntVar(&o.Passing, "features-passing", 0, "ignored: computed from the files")
	return c
}

// ---- progress get-status

func (a *App) newGetStatusCmd() *cobra.Command {
	var field string
	c := &cobra.Command{
		Use: "get-status", Short: "Print the status, or one field of it (--field takes a gjson path)", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			status, err := a.app.GetStatus(c.Context(), a.caller(), field)
			if err != nil {
				return err
			}
			if field == "" {
				return a.emit(status.Value(), func(w io.Writer) { printRaw(w, []byte(status.Raw)) })
			}
			return a.recordField(status, field, "status")
		},
	}
	c.Flags().StringVar(&field, "field", "", "print one field's raw value (current_branch, current_feature, ...)")
	return c
}

// ---- progress get-session

func (a *App) newGetSessionCmd() *cobra.Command {
	var field string
	c := &cobra.Command{
		Use: "get-session ID", Short: "Print a session (-1 for the last), or one field of it", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := parseSessionRef(args[0])
			if err != nil {
				return err
			}
			rec, err := a.app.GetSession(c.Context(), a.caller(), id)
			if err != nil {
				return err
			}
			if field == "" {
				return a.emit(rec.Value(), func(w io.Writer) { printRaw(w, []byte(rec.Raw)) })
			}
			return a.recordField(rec, field, "session")
		},
	}
	c.Flags().StringVar(&field, "field", "", "print one field's raw value (agent_type, commit_range.from, ...)")
	return c
}

// ---- progress get-review-type

func (a *App) newGetReviewTypeCmd() *cobra.Command {
	return &cobra.Command{
		Use: "get-review-type", Short: "Say whether REVIEW reviews a FEATURE or an ARCHITECTURE_REFACTOR", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			r, err := a.app.GetReviewType(c.Context(), a.caller())
			if err != nil {
				return err
			}
			return a.emit(r, func(w io.Writer) {
				printf(w, "REVIEW_TYPE: %s", r.ReviewType)
				if r.ReviewType == "FEATURE" {
					printf(w, "FEATURE_ID: %s", app.Deref(r.FeatureID))
					if r.ItemType != "" {
						printf(w, "ITEM_TYPE: %s", r.ItemType)
					}
				}
				printf(w, "BRANCH: %s", app.Deref(r.Branch))
			})
		},
	}
}

// ---- progress next-session-id

func (a *App) newNextSessionIDCmd() *cobra.Command {
	return &cobra.Command{
		Use: "next-session-id", Short: "Print the id the next session record gets (inside a session: its own, until it records)", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			id, err := a.app.NextSessionID(c.Context(), a.caller())
			if err != nil {
				return err
			}
			return a.emit(map[string]int{"next_session_id": id}, func(w io.Writer) { printf(w, "%d", id) })
		},
	}
}

func (a *App) newProgressListCmd() *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List every session", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			p, err := a.app.Progress(c.Context(), a.caller())
			if err != nil {
				return err
			}
			lines := []app.SessionLine{}
			records := []any{}
			p.Sessions(func(raw []byte) {
				r := gjson.ParseBytes(raw)
				lines = append(lines, app.SessionLine{SessionID: int(r.Get("session_id").Int()), AgentType: r.Get("agent_type").String(), Outcome: r.Get("outcome").String(), Summary: r.Get("summary").String()})
				records = append(records, r.Value())
			})
			return a.emit(map[string]any{"sessions": records}, func(w io.Writer) {
				for _, l := range lines {
					printf(w, "[%d] %s: %s - %s...", l.SessionID, l.AgentType, l.Outcome, app.Truncate(l.Summary, 50))
				}
			})
		},
	}
}

// parseSessionRef reads a session id: N, -N (rewritten to @-N by
// rewriteArgs; N-th from the end) or "last".
func parseSessionRef(s string) (int, error) {
	t := strings.TrimPrefix(s, "@")
	if t == "last" {
		return -1, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n == 0 {
		return 0, errs.New(errs.Usage, "ID: %q is not a session id (a number, or -1 for the last session)", s)
	}
	return n, nil
}
