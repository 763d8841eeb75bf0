package cli

import (
	"strings"
	"testing"

	"github.com/baton-cli/baton/bridge"
)

// TestClaudeCommandRunsRealCommands: every baton command the Claude Code
// command file tells its host to run names a real command with flags it
// takes, and the file covers each step of the host loop.
func TestClaudeCommandRunsRealCommands(t *testing.T) {
	text := bridge.ClaudeCommand
	var lines []string
	inBlock := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock && strings.HasPrefix(l, "baton ") {
			lines = append(lines, l)
		}
	}
	if len(lines) < 4 {
		t.Fatalf("the command file runs %d baton commands: %q", len(lines), lines)
	}
	r := strings.NewReplacer("$ARGUMENTS", "--max-sessions 3", "HOST_TOKEN", "0123", "ANSWER_FILE", "/tmp/answer.txt", "WHAT_WENT_WRONG", "it failed")
	for _, l := range lines {
		checkExample(t, "claude-command.md", r.Replace(l))
	}
	for _, want := range []string{"baton --json run $ARGUMENTS", "baton --json run --resume $ARGUMENTS", "baton bridge respond --token HOST_TOKEN --input ANSWER_FILE",
		"Exit 42 is not an error", "Task tool", "host_token", "prompt_file"} {
		if !strings.Contains(text, want) {
			t.Errorf("the command file lacks %q", want)
		}
	}
	for _, banned := range []string{"--as", "BATON_ROLE", "BATON_ALLOW_MAIN", "--branch"} {
		if strings.Contains(text, banned) {
			t.Errorf("the command file mentions %q", banned)
		}
	}
}
