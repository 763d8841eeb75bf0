package bridge

import _ "embed" // the Claude Code command file

// ClaudeCommand is a ready-to-use Claude Code slash command that makes
// Claude Code the host of a 'baton run': it runs the orchestrator, answers
// each exit 42 by running the named agent as a subagent, writes the answer
// with 'baton bridge respond' and resumes. 'baton bridge
// install-claude-command' writes it to .claude/commands/.
//
//go:embed claude-command.md
var ClaudeCommand string
