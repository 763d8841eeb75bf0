package cli

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/manpage"
)

// examples is every command's Example, by its path below baton. Each line is
// a command a user can run as it stands (ids as in the README's quick start).
var examples = map[string]string{
	"": `baton init -n shop                      # set up the state files
baton status                            # one screen: where the project is
baton next --json                       # which role runs next, as JSON`,

	"init": `baton init
baton init -n shop --hooks              # also refuse commits onto main
baton init --scripts                    # install scripts/progress.py, reviews.py, features.py`,
	"status":    "baton status\nbaton status --json",
	"next":      "baton next\nbaton next --json",
	"verify":    "baton verify\nbaton verify --json",
	"log":       "baton log\nbaton log --feature F001\nbaton log --role REVIEW --since 1h\nbaton log --refused --limit 20\nbaton log --verdict REQUEST_CHANGES --json\nbaton log --since 2026-01-29T10:00:00Z --until 2026-01-30T00:00:00Z",
	"show":      "baton show F001\nbaton show BUG-001 --json\nbaton show DEBT-001",
	"schema":    "baton schema                            # list the commands with a schema\nbaton schema status\nbaton schema reviews add-review\nbaton schema error",
	"report":    "baton report -o audit.html\nbaton report -o - > audit.html",
	"run":       "baton run --agent claude               # Claude Code, its preset command line\nbaton run --agent codex --follow        # Codex, its output streamed\nbaton run --dry-run --agent claude      # the next prompt and the agent's command line, nothing opened\nbaton run --agent claude --max-cost 5   # stop for a person once the run has spent $5\nbaton run --agent-cmd ./agent.sh --stall-timeout 5m\nbaton run --agent-cmd 'my-agent --stdin' --json\nbaton run --resume                      # continue after a bridge checkpoint\nbaton run --prompts ../old/prompts --agent claude   # the predecessor's prompt files",
	"demo":      "baton demo\nbaton demo --keep                       # keep the scratch project to look at\nbaton demo --dir /tmp/shop              # build the project there (kept)\nbaton demo --bridge --json",
	"context":   "baton context                            # inside an agent session: its role, task and rules\nbaton context --budget 1500 --json\nbaton context --role REVIEW --feature F001   # a person: REVIEW's view of F001",
	"man":       "baton man ./man\nman ./man/baton-status.1",
	"mcp":       "claude mcp add baton -- baton mcp       # Claude Code: baton's tools in your own sessions\nbaton mcp                                # an MCP client starts it over stdio",
	"help":      "baton help\nbaton help reviews add-review\nbaton --version",
	"reconcile": "baton reconcile --as HUMAN --reason \"restored reviews.json from backup\"\nbaton --json reconcile --as HUMAN --reason \"raised max_fix_cycles\"",

	"branch":        "baton branch create feature/health",
	"branch create": "baton branch create feature/health\nbaton branch create refactor/db-layer --from main",

	"session":         "baton session current                   # the session this call is bound to\nbaton session end -o READY_FOR_REVIEW -s \"Implemented F001\"",
	"session start":   "eval \"$(baton session start --agent IMPLEMENT --feature F001 | grep '^export')\"\nbaton --json session start --agent REVIEW   # hand env.BATON_SESSION to the agent only",
	"session end":     "baton session end -o READY_FOR_REVIEW -s \"Implemented F001\"\neval \"$(baton session end -o SUCCESS -s \"merged F001\" | grep '^unset')\"   # and clear the shell's credential\nbaton session end -o ERROR -s \"tests would not run\" --failure tool_failure",
	"session current": "baton session current\nbaton session current --json",

	"key show":    "baton key show\nbaton key show --json",
	"key publish": "baton key publish\ngit add .baton-signers && git commit -m 'baton: allowed signers'",

	"verification":         "baton verification prepare --session-id 4 --feature-ids F001\nbaton verification status --session-id 4",
	"verification prepare": "baton verification prepare --session-id 4 --feature-ids F001,F002 --agent-type IMPLEMENT",
	"verification status":  "baton verification status --session-id 4",
	"verification list":    "baton verification list\nbaton --json verification list",
	"verification report":  "baton verification report --session-id 4   # the template, when no subagent wrote one",

	"progress":                 "baton progress get-status\nbaton progress get-session -1",
	"progress init":            "baton progress init -n shop -c 12",
	"progress add-session":     "baton progress add-session -a IMPLEMENT -s \"Implemented F001\" -o READY_FOR_REVIEW --features F001 --commits \"abc1234:add health check\"",
	"progress update-status":   "baton progress update-status --phase REVIEW\nbaton progress update-status --branch feature/health",
	"progress get-status":      "baton progress get-status\nbaton progress get-status --field current_branch",
	"progress get-session":     "baton progress get-session -1\nbaton progress get-session 3 --field commit_range.from",
	"progress get-review-type": "baton progress get-review-type",
	"progress next-session-id": "baton progress next-session-id",
	"progress list":            "baton progress list\nbaton progress list --json",

	"reviews":                "baton reviews get-last\nbaton reviews show-issues",
	"reviews init":           "baton reviews init",
	"reviews add-review":     "baton reviews add-review -a REVIEW --feature-id F001 -b feature/health -v REQUEST_CHANGES \\\n  -s \"Missing error handling\" --issues '[{\"severity\":\"major\",\"description\":\"No DB error handling\"}]'\nbaton reviews add-review -a REVIEW --feature-id F001 -b feature/health -v PASS -s \"Verified\"",
	"reviews add-fix":        "baton reviews add-fix -r 1 --issues-fixed '[{\"issue_id\":\"R1-M1\",\"commit\":\"def5678\"}]'",
	"reviews get-review":     "baton reviews get-review R1\nbaton reviews get-review 1 --field verdict",
	"reviews get-last":       "baton reviews get-last\nbaton reviews get-last --field verdict",
	"reviews get-fix-count":  "baton reviews get-fix-count F001",
	"reviews show-issues":    "baton reviews show-issues",
	"reviews list":           "baton reviews list\nbaton reviews list --json",
	"reviews next-review-id": "baton reviews next-review-id",
	"reviews mark-merged":    "baton reviews mark-merged FIX-1 --merge-commit 9f8e7d6",
	"reviews merge":          "baton reviews merge\nbaton reviews merge --review 2 --ff",
	"runner":                 "baton runner check box1 --agent-cmd 'sh agent.sh'",
	"runner check":           "baton runner check box1 --agent claude\nbaton runner check box1 --json",
	"land":                   "baton land --as HUMAN --reason 'land the queue'   # what baton run does between sessions\nbaton land --max 1 --json --as HUMAN --reason 'one at a time'",
	"reviews reject":         "baton reviews reject\nbaton reviews reject --review 2",

	"features":                 "baton features next\nbaton features stats",
	"features next":            "baton features next\nbaton features next -t BUG",
	"features next-candidates": "baton features next-candidates -c 5",
	"features get":             "baton features get F001\nbaton features get F001 --field passes",
	"features pass":            "baton features pass F001",
	"features pass-batch":      "baton features pass-batch \"F001,F002,F003\"",
	"features fail":            "baton features fail F002 -r \"Login returns 500\"\nbaton features fail BUG-001 --failure-reason \"crashes again on empty input\"",
	"features list":            "baton features list\nbaton features list --json",
	"features stats":           "baton features stats",
	"features next-id":         "baton features next-id -t BUG",
	"features debt-count":      "baton features debt-count",
	"features append":          "baton features append -s app_spec.txt -e '[{\"id\":\"F001\",\"name\":\"Health check\"}]'\nbaton features append -s review-R3 -e debt.json",

	"bridge":                        "baton bridge status\nbaton bridge loop --agent-cmd 'claude -p' -- python3 orchestrator.py",
	"bridge request":                "baton bridge request --agent planner --prompt \"Plan the release\"",
	"bridge respond":                "claude -p < .baton/bridge/prompt.md | baton bridge respond\nbaton bridge respond -i answer.txt --model claude\nbaton bridge respond --token 3f2a... -i answer.txt",
	"bridge validate":               "baton bridge validate\nbaton bridge validate .baton/bridge/response.json --kind response",
	"bridge status":                 "baton bridge status\nbaton bridge status --json",
	"bridge clean":                  "baton bridge clean",
	"bridge complete":               "baton bridge complete",
	"bridge install-claude-command": "baton bridge install-claude-command\nbaton bridge install-claude-command --name baton-run --force",
	"bridge loop":                   "baton bridge loop --agent-cmd 'claude -p' -- python3 orchestrator.py\nbaton bridge loop --resume -- python3 orchestrator.py",

	"demo agent": "baton demo agent < prompt.md",

	"completion":            "baton completion bash > /etc/bash_completion.d/baton\nsource <(baton completion bash)\nbaton completion zsh > \"${fpath[1]}/_baton\"",
	"completion bash":       "source <(baton completion bash)",
	"completion zsh":        "baton completion zsh > \"${fpath[1]}/_baton\"",
	"completion fish":       "baton completion fish > ~/.config/fish/completions/baton.fish",
	"completion powershell": "baton completion powershell | Out-String | Invoke-Expression",
}

// commandKey is c's path below baton ("" for baton itself).
func commandKey(c *cobra.Command) string {
	return strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), c.Root().Name()), " ")
}

// addExamples gives every command in the tree its example.
func addExamples(c *cobra.Command) {
	if ex, ok := examples[commandKey(c)]; ok && c.Example == "" {
		c.Example = indent(ex)
	}
	for _, sub := range c.Commands() {
		addExamples(sub)
	}
}

func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n")
}

// ---- man

func (a *App) newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write a man page for every command into DIR (baton.1, baton-status.1, ...)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir := args[0]
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(a.env.Cwd, dir)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return errs.New(errs.Usage, "man: %v", err)
			}
			hdr := manpage.Header{Section: "1", Date: a.env.Now().Format("Jan 2006"), Source: "baton " + version(), Manual: "baton manual"}
			pages, err := manpage.WriteTree(c.Root(), hdr, dir)
			if err != nil {
				return errs.New(errs.Unexpected, "man: %v", err)
			}
			sort.Strings(pages)
			return a.emit(map[string]any{"dir": dir, "pages": app.NonNil(pages)}, func(w io.Writer) {
				printf(w, "SUCCESS: %d man pages in %s (read one with: man %s)", len(pages), dir, filepath.Join(dir, "baton.1"))
			})
		},
	}
}
