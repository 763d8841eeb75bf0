package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
)

// The verification command group: the predecessor's scripts/verification.py
// (prepare, status, list, report), which its coding, fix and review prompts
// call, over the evidence folders in verification/<session>/.

func (a *App) newVerificationCmd() *cobra.Command {
	c := group("verification", "Prepare and read a session's verification evidence (verification/<session>/)",
		a.newVerificationPrepareCmd(), a.newVerificationStatusCmd(), a.newVerificationListCmd(), a.newVerificationReportCmd())
	c.Long = verificationHelp
	return c
}

func (a *App) newVerificationPrepareCmd() *cobra.Command {
	var in app.PrepareInput
	var ids string
	c := &cobra.Command{
		Use:   "prepare --session-id N --feature-ids F001,F002 [--agent-type IMPLEMENT]",
		Short: "Make verification/<N>/ and write its verification_input.json for a verification subagent",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			for _, id := range strings.Split(ids, ",") {
				if id = strings.TrimSpace(id); id != "" {
					in.FeatureIDs = append(in.FeatureIDs, id)
				}
			}
			res, err := a.app.VerificationPrepare(c.Context(), a.caller(), in)
			if err != nil {
				return err
			}
			return a.emit(res, func(w io.Writer) {
				printf(w, "SUCCESS: Verification input prepared")
				printf(w, "Directory: %s", res.Dir)
				printf(w, "Input file: %s", res.InputFile)
				b, _ := json.MarshalIndent(res.Input, "", "  ")
				fmt.Fprintln(w, string(b))
			})
		},
	}
	c.Flags().IntVar(&in.SessionID, "session-id", 0, "the session whose work is verified (required)")
	c.Flags().StringVar(&ids, "feature-ids", "", "comma-separated feature ids to verify (required)")
	c.Flags().StringVarP(&in.AgentType, "agent-type", "a", "IMPLEMENT", "the role whose work it is: IMPLEMENT, FIX, BUGFIX or GLOBAL_FIX")
	_ = c.MarkFlagRequired("session-id")
	_ = c.MarkFlagRequired("feature-ids")
	return c
}

func (a *App) newVerificationStatusCmd() *cobra.Command {
	var session int
	c := &cobra.Command{
		Use:   "status --session-id N",
		Short: "Say whether verification/<N>/ is not started, awaiting its report, or what the report concludes",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			st, err := a.app.VerificationStatus(c.Context(), a.caller(), session)
			if err != nil {
				return err
			}
			return a.emit(st, func(w io.Writer) {
				b, _ := json.MarshalIndent(st, "", "  ")
				fmt.Fprintln(w, string(b))
			})
		},
	}
	c.Flags().IntVar(&session, "session-id", 0, "the session to check (required)")
	_ = c.MarkFlagRequired("session-id")
	return c
}

func (a *App) newVerificationListCmd() *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List every session's verification status", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			list, err := a.app.VerificationList(c.Context(), a.caller())
			if err != nil {
				return err
			}
			return a.emit(list, func(w io.Writer) { printVerificationList(w, list) })
		},
	}
}

func printVerificationList(w io.Writer, list []app.VerificationEntry) {
	if len(list) == 0 {
		printf(w, "No verification reports found.")
		return
	}
	rule := strings.Repeat("-", 37)
	printf(w, "%-10s %-15s %-12s", "Session", "Status", "Screenshots")
	printf(w, "%s", rule)
	count := map[string]int{}
	for _, e := range list {
		printf(w, "%-10d %-15s %-12d", e.SessionID, e.Status, e.Screenshots)
		count[e.Status]++
	}
	printf(w, "%s", rule)
	printf(w, "Total: %d | Verified: %d | Not Verified: %d | In Progress: %d", len(list), count["VERIFIED"], count["NOT_VERIFIED"], count["IN_PROGRESS"])
}

func (a *App) newVerificationReportCmd() *cobra.Command {
	var session int
	c := &cobra.Command{
		Use:   "report --session-id N",
		Short: "Write the report template verification/<N>/verification.md, for the agent to complete",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			path, err := a.app.VerificationReport(c.Context(), a.caller(), session)
			if err != nil {
				return err
			}
			return a.emit(map[string]string{"report": path}, func(w io.Writer) {
				printf(w, "SUCCESS: Report template generated: %s", path)
				printf(w, "Edit this file to complete verification manually.")
			})
		},
	}
	c.Flags().IntVar(&session, "session-id", 0, "the session whose report it is (required)")
	_ = c.MarkFlagRequired("session-id")
	return c
}

const verificationHelp = `Verification evidence, as the predecessor's scripts/verification.py kept it (baton init
--scripts installs a verification.py that calls this command). Each session that hands work
over may have a folder verification/<session>/ in the state directory:

  verification_input.json   what to verify: the features' records, test commands
                            ($TEST_COMMANDS, comma-separated; default "pytest tests/,npm run test")
                            and the app's URLs ($FRONTEND_URL, $BACKEND_URL)
  verification.md           the report; its "**Status:** VERIFIED | NOT_VERIFIED | INCOMPLETE"
                            line is the status
  screenshots/*.png         visual evidence
  test_evidence/test_output.txt

The folder is the agents' work product: baton lays it out and reads it, lists verification/ in
the repository's info/exclude like the state, and records nothing about it — evidence is
something REVIEW weighs, not something baton enforces.`
