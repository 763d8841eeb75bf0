package cli

import (
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/reviews"
)

// personRemedy is what a person does about the problems verify and
// status report. Only the person's key makes it work; refusals an agent
// reads never name it.
const personRemedy = "REMEDY (a person, with the personal key): look at what happened ('baton log', 'git log'), put right what must be, then record the files as they are with 'baton --as HUMAN --reason WHY reconcile' (README, section Audit)"

// gitRemedy is what the reader of a clone does about the problems verify
// --from-git reports.
const gitRemedy = "REMEDY (a person, with the personal key): the record this clone carries does not hold up. Where the project runs, look with 'baton verify', write the attestations again with 'baton --as HUMAN --reason WHY reconcile' and publish them ('git push origin " + app.NotesRef + "'); until then, do not trust the commits named above"

func (a *App) newVerifyCmd() *cobra.Command {
	var in app.VerifyInput
	c := &cobra.Command{
		Use:   "verify",
		Short: "Check the audit chain, that the files match the last event, the state's invariants and git (exit 6 on any problem)",
		Long: `Check the audit chain, that the files match the last event, that every passing feature has a
passing review, and in a git repository: that every recorded hash (sessions' commits and ranges,
reviews' ranges and merge commits, fixes' commits) exists, and that every commit on main since
'baton init' (its head then is in .baton/git.json) is accounted for by a recorded merge (the
merge commit and the commits it brought in) or a session's commits. Exit 6 on any problem.

Every entry's signature is checked with public keys only: a person's or a launcher's entry with
a trusted key, a session's entry with the key its signed opening records. The trusted keys are
your own (current and retired) and those the project's allowed-signers file (.baton-signers,
which a person publishes) lists; with --trusted-keys FILE, the keys FILE lists and no other.

With --from-git, only what the repository carries is checked, with no state directory (a fresh
clone, a CI job): every baton merge on main (a merge commit with a Baton-Log trailer) must be
signed in git's SSH format by a trusted key, and every landing must have its attestation in
refs/notes/baton (fetch it: git fetch origin refs/notes/baton:refs/notes/baton), signed by a
trusted key, about that commit, with its sessions' commits and reviewed head in main's history and
its tree the one the gate passed. The trusted keys are those of --trusted-keys FILE, else your own
and those of the repository's .baton-signers.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			res, err := a.app.Verify(c.Context(), a.caller(), in)
			if err != nil {
				return err
			}
			gitChecked := res.GitChecked
			if err := a.emit(res, func(w io.Writer) {
				for _, p := range res.Problems {
					printf(w, "PROBLEM: [%s] %s", p.Check, p.Message)
				}
				switch {
				case res.OK && res.FromGit:
					printf(w, "OK: %d landing(s) on main checked from git alone: every baton merge signed by a trusted key, every attestation signed by one and about its commit, its sessions' commits and reviewed head in main's history, its tree the gate's", res.Landings)
				case res.OK:
					git := ""
					if gitChecked {
						git = ", every recorded commit exists, every commit on main is accounted for"
					}
					auth := ", every entry's signature checked"
					if !res.Authenticated {
						auth = ", authenticity NOT checked (no trusted key)"
					}
					printf(w, "OK: %d events, chain intact%s, files match the last event, every passing feature has a passing review%s", res.Events, auth, git)
				}
				for _, n := range res.Notes {
					printf(w, "NOTE: %s", n)
				}
				switch {
				case !res.OK && res.FromGit:
					printf(w, "%s", gitRemedy)
				case !res.OK:
					printf(w, "%s", personRemedy)
				}
			}); err != nil {
				return err
			}
			if !res.OK {
				return errs.New(errs.Invalid, "verify found %d problem(s)", len(res.Problems))
			}
			return nil
		},
	}
	c.Flags().StringVar(&in.TrustedKeys, "trusted-keys", "", "trust only the keys this allowed-signers file lists (git's allowed_signers format)")
	c.Flags().BoolVar(&in.FromGit, "from-git", false, "check the repository alone, with no state directory: baton's merges on main and their attestations (refs/notes/baton)")
	return c
}

func (a *App) newWhatNextCmd() *cobra.Command {
	return &cobra.Command{
		Use: "next", Short: "Say which role runs next, on what, and the rule that decided it", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			n, err := a.app.Next(c.Context(), a.caller())
			if err != nil {
				return err
			}
			return a.emit(n, func(w io.Writer) {
				printf(w, "NEXT: %s", n.Phase)
				printf(w, "FEATURE: %s", app.Deref(n.Feature))
				printf(w, "BRANCH: %s", app.Deref(n.Branch))
				printf(w, "RULE: %s", n.Rule)
				printf(w, "WHY: %s", n.Reason)
			})
		},
	}
}

func (a *App) newStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use: "status", Short: "One screen: phase, feature, branch, counters, last session and review, fix cycles left, problems", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			res, err := a.app.Status(c.Context(), a.caller())
			if err != nil {
				return err
			}
			if w := a.app.SandboxWarning(); w != "" {
				a.warn("%s", w)
			}
			return a.emit(res, func(w io.Writer) { writeStatus(w, res) })
		},
	}
}

// writeLanes shows the lanes running, the landing queue and the gate.
func writeLanes(w io.Writer, r app.LanesView) {
	if len(r.Lanes) == 0 {
		printf(w, "Lanes:     none running (agents: %d)", r.Agents)
	}
	for _, l := range r.Lanes {
		on := ""
		if l.Runner != "" {
			on = " on runner " + l.Runner
		}
		printf(w, "Lane:      %s %s session %d for %s%s", l.Item, l.Role, l.Session, time.Duration(l.ElapsedSeconds)*time.Second, on)
	}
	if len(r.Landing) == 0 {
		printf(w, "Queue:     empty")
	}
	for _, q := range r.Landing {
		printf(w, "Queue:     %s (R%d, %s) since %s", q.Item, q.ReviewID, q.Branch, q.QueuedAt)
	}
	if r.Gate == nil {
		printf(w, "Gate:      none configured")
	} else {
		printf(w, "Gate:      %s (timeout %s, batch %d)", r.Gate.Command, r.Gate.Timeout, r.Gate.Batch)
	}
}

func writeStatus(w io.Writer, r app.StatusResult) {
	printf(w, "Project:   %s (state in %s)", r.Project, r.StateDir)
	printf(w, "Next:      %s  feature %s  branch %s", r.Next.Phase, app.OrDash(app.Deref(r.Next.Feature)), app.OrDash(app.Deref(r.Next.Branch)))
	printf(w, "Why:       %s [%s]", r.Next.Reason, r.Next.Rule)
	printf(w, "Features:  %d/%d passing, %d completed (passed review)", r.Passing, r.Total, r.Completed)
	if s, ok := r.LastSession.(map[string]any); ok {
		printf(w, "Session:   #%v %v %v at %v — %v", s["session_id"], s["agent_type"], s["outcome"], s["completed_at"], s["summary"])
	} else {
		printf(w, "Session:   none yet")
	}
	if rv, ok := r.LastReview.(map[string]any); ok {
		g := gjson.Parse(string(jsondoc.Compact(rv)))
		printf(w, "Review:    R%v %v on %v (%v issues)", rv["review_id"], rv["verdict"], app.OrDash(app.Str(rv["feature_id"])), reviews.IssueCount(g))
	} else {
		printf(w, "Review:    none yet")
	}
	if r.FixCycles != nil {
		printf(w, "Fixes:     %s: %d of %d fix cycles used, %d left", r.FixCycles.FeatureID, r.FixCycles.FixCount, r.FixCycles.MaxFixCycles, r.FixCycles.Remaining)
	}
	if len(r.OpenSessions) == 0 {
		printf(w, "Open:      no session open")
	}
	for _, s := range r.OpenSessions {
		printf(w, "Open:      session %d %s since %s", s.SessionID, s.AgentType, s.StartedAt)
	}
	writeLanes(w, r.LanesView)
	writeCosts(w, r.Costs)
	if len(r.Problems) == 0 {
		printf(w, "Verify:    ok")
	}
	for _, p := range r.Problems {
		printf(w, "Verify:    PROBLEM [%s] %s", p.Check, p.Message)
	}
	if len(r.Problems) > 0 {
		printf(w, "           %s", personRemedy)
	}
}
