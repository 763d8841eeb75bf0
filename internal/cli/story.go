package cli

import (
	"context"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/workflow"
)

func (a *App) newLogCmd() *cobra.Command {
	var o app.LogInput
	c := &cobra.Command{
		Use: "log", Short: "Show the audit timeline (filter by feature, role, session, verdict, time; refused attempts)", Args: cobra.NoArgs,
		Long: `Show the audit timeline, oldest first: every change, branch, merge and refused attempt, who
made it (role and session) and what it recorded (a session's summary and commits, a review's
verdict). --feature shows the feature's whole story: its events and every event of the sessions
that worked on it, reviewed it or fixed it. Times are ISO 8601 or relative to now (30m, 1h, 2d).
An unknown feature, role, session or verdict is a usage error (exit 2).`,
		RunE: func(c *cobra.Command, _ []string) error { return a.runLog(c.Context(), o) },
	}
	f := c.Flags()
	f.StringVar(&o.Feature, "feature", "", "only the story of this feature, bug or debt item")
	f.StringVar(&o.Role, "role", "", "only events by this role ("+strings.Join(append(append([]string{}, progress.AgentTypes...), workflow.Human), ", ")+")")
	f.IntVar(&o.Session, "session", 0, "only events of this session")
	f.StringVar(&o.Verdict, "verdict", "", "only reviews with this verdict, and their merges and rejections")
	f.BoolVar(&o.Refused, "refused", false, "only refused attempts")
	f.IntVar(&o.Limit, "limit", 0, "only the last N events (after filtering)")
	f.StringVar(&o.Since, "since", "", "only events at or after this time (ISO 8601, or 30m, 1h, 2d ago)")
	f.StringVar(&o.Until, "until", "", "only events at or before this time (ISO 8601, or 30m, 1h, 2d ago)")
	return c
}

func (a *App) runLog(ctx context.Context, o app.LogInput) error {
	res, err := a.app.Log(ctx, a.caller(), o)
	if err != nil {
		return err
	}
	out := res.Events
	return a.emit(map[string]any{"events": out}, func(w io.Writer) {
		for _, l := range out {
			printf(w, "%s", logText(l))
		}
	})
}
