package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/reviews"
)

func (a *App) newShowCmd() *cobra.Command {
	var fromGit bool
	c := &cobra.Command{
		Use:   "show ID",
		Short: "Tell one feature's, bug's or debt item's whole story: sessions, reviews, issues and fixes, commits, merge, refusals",
		Long: `Tell the whole story of a feature, bug or debt item: every session of every role that worked
on it, reviewed it or fixed it (with summaries, outcomes, commits, ranges and durations), its
reviews with their verdicts and the decision each led to, each issue and the fixes (and commits)
that answered it, the merge, the refused attempts, where a debt item came from, and the timeline.

With --from-git, the story is told from what the repository carries alone (a clone with no state
directory): the attestations of the item's landings in refs/notes/baton, each checked as
'baton verify --from-git' checks it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if fromGit {
				st, err := a.app.ShowFromGit(c.Context(), a.caller(), args[0])
				if err != nil {
					return err
				}
				return a.emit(st, func(w io.Writer) { writeGitStory(w, st) })
			}
			st, err := a.app.Show(c.Context(), a.caller(), args[0])
			if err != nil {
				return err
			}
			return a.emit(st, func(w io.Writer) { writeStory(w, st) })
		},
	}
	c.Flags().BoolVar(&fromGit, "from-git", false, "tell the story from the repository's attestations alone (refs/notes/baton), with no state directory")
	return c
}

// writeGitStory tells an item's landings as their attestations record them.
func writeGitStory(w io.Writer, st app.GitStory) {
	printf(w, "%s — landed %d time(s) on main, as the attestations in %s record it", st.ID, len(st.Landings), app.NotesRef)
	for _, gl := range st.Landings {
		printf(w, "Landing:   %s", gl)
		if l := gl.Landing; l != nil {
			printf(w, "Item:      %s (%s) from %s into %s", l.Item.ID, l.Item.Kind, l.Item.Branch, l.Into)
			signed := "not signed by baton (not baton's commit)"
			if l.Merge.Signed {
				signed = "signed by " + l.Merge.SignedBy
			}
			printf(w, "Merge:     %s", signed)
			for _, s := range l.Sessions {
				printf(w, "Session:   #%d %s %s..%s (%d commits)", s.ID, s.Role, app.Short(s.From), app.Short(s.To), len(s.Commits))
			}
			for _, rv := range l.Reviews {
				printf(w, "Review:    R%d %s by %s#%d on %s..%s", rv.ID, rv.Verdict, rv.Role, rv.Session, app.Short(rv.From), app.Short(rv.To))
			}
			if g := l.Gate; g != nil {
				printf(w, "Gate:      %q on tree %s: exit %d (output %s)", g.Command, app.Short(g.Tree), g.ExitCode, g.Digest)
			} else {
				printf(w, "Gate:      none configured")
			}
		}
		if len(gl.Problems) == 0 {
			printf(w, "Checked:   ok")
		}
		for _, p := range gl.Problems {
			printf(w, "PROBLEM:   %s", p)
		}
	}
}

func writeStory(w io.Writer, st app.Story) {
	state := map[bool]string{true: "passing", false: "not passing"}[st.Passes]
	printf(w, "%s %s — %s, %s", st.ID, st.Name, kindName(st.Kind), state)
	writeOrigin(w, st.Origin)
	printf(w, "Time:      %s → %s (%s)", app.OrDash(app.Deref(st.StartedAt)), app.OrDash(app.Deref(st.FinishedAt)), durationText(st.DurationSeconds))
	printf(w, "Sessions:  %d", len(st.Sessions))
	for _, s := range st.Sessions {
		rng := ""
		if r, ok := s["commit_range"].(map[string]any); ok && (app.Str(r["from"]) != "" || app.Str(r["to"]) != "") {
			rng = fmt.Sprintf(" [%s..%s]", app.Str(r["from"]), app.Str(r["to"]))
		}
		printf(w, "  #%v %v %v %v → %v (%s) %q%s", s["session_id"], s["agent_type"], app.OrDash(app.Str(s["outcome"])), s["started_at"], app.OrDash(app.Str(s["completed_at"])), durationText(int64Of(s["duration_seconds"])), app.Str(s["summary"]), rng)
		writeSessionCost(w, s["usage"])
	}
	printf(w, "Commits:   %d", len(st.Commits))
	for _, c := range st.Commits {
		printf(w, "  %s %s (%s#%d)", c.Hash, c.Message, c.Role, c.SessionID)
	}
	printf(w, "Reviews:   %d", len(st.Reviews))
	for _, r := range st.Reviews {
		g := gjson.Parse(string(jsondoc.Pretty(r)))
		printf(w, "  R%d %s on %s %s..%s %q → %s [%s]", g.Get("review_id").Int(), reviews.VerdictOf(g), g.Get("branch").String(), g.Get("commit_range.from").String(), g.Get("commit_range.to").String(), g.Get("summary").String(), app.OrDash(g.Get("decision.phase").String()), app.OrDash(g.Get("decision.rule").String()))
		for _, is := range st.Issues {
			if is.ReviewID == int(g.Get("review_id").Int()) {
				printf(w, "    %s %s %s — %s", is.ID, is.Severity, is.Description, app.IssueStatus(is))
			}
		}
	}
	for _, m := range st.Merges {
		printf(w, "Merge:     R%d (%s) merged %s as %s onto %s at %s", m.ReviewID, m.Verdict, m.Branch, m.MergeCommit, app.OrDash(m.MergedOnto), m.MergedAt)
	}
	for _, g := range st.Gates {
		printf(w, "Gate:      entry %d: %q on tree %s: exit %d in %dms (output %s)", g.Seq, g.Command, app.Short(g.Tree), g.ExitCode, g.DurationMS, g.Digest)
	}
	printf(w, "Refused:   %d", len(st.Refused))
	for _, l := range st.Refused {
		printf(w, "  %s", logText(l))
	}
	printf(w, "Timeline:")
	for _, l := range st.Events {
		printf(w, "  %s", logText(l))
	}
}

func writeOrigin(w io.Writer, o app.StoryOrigin) {
	from := app.OrDash(o.Source)
	if o.SourceReview != nil {
		from = fmt.Sprintf("review R%d", *o.SourceReview)
		if r, ok := o.Review.(map[string]any); ok {
			from += fmt.Sprintf(" (%v on %v: %q)", r["verdict"], app.OrDash(app.Str(r["feature_id"])), app.Str(r["summary"]))
		}
		if o.Source != "" {
			from += "; " + o.Source
		}
	}
	if o.Event != nil {
		from += fmt.Sprintf(" — added by %s at %s (%s)", o.Event.Command, o.Event.Timestamp, o.Event.EventID)
	}
	printf(w, "Origin:    %s", from)
}
