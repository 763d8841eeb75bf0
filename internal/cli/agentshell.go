package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/baton-cli/baton/internal/sandbox"
)

// The shell of a confined Claude Code agent (CLAUDE_CODE_SHELL): Claude
// Code runs each command of its Bash tool as SHELL -c LINE, and the shell
// it is given is a link to baton named bash in a directory named
// agentShellDir, which the agent may read and not write. baton runs the
// system's bash with the same arguments in a Landlock domain nested in the
// agent's: Landlock keeps a process of a nested domain from reading or
// driving one of the domain above it, so a program the agent ran (a test a
// reviewed branch planted) cannot reach the agent CLI's memory or its pipe
// to baton's MCP server through /proc to make calls as the agent. The
// preset also keeps the clone's own Claude Code settings and MCP servers
// out, and its hooks (agentcli): a branch, or code the agent ran writing
// the agent's home, could otherwise change the shell back, or start hooks
// and servers of its own beside the agent.

// agentShellDir is the name of the directory that holds the shell's link.
const agentShellDir = "baton-agent-shell"

// isAgentShell says whether this process is the agent's shell: started
// through the link.
func isAgentShell() bool {
	return filepath.Base(os.Args[0]) == "bash" && filepath.Base(filepath.Dir(os.Args[0])) == agentShellDir
}

// agentShellLink makes the shell's link to this baton beneath dir and
// returns its path.
func agentShellLink(dir string) (string, error) {
	self, err := selfPath()
	if err != nil {
		return "", err
	}
	d := filepath.Join(dir, agentShellDir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", err
	}
	link := filepath.Join(d, "bash")
	_ = os.Remove(link)
	if err := os.Symlink(self, link); err != nil {
		return "", err
	}
	// Claude Code falls back to the system's bash for a shell it cannot
	// run: the agent does not start without one that runs
	if fi, err := os.Stat(link); err != nil || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("the agent shell %s cannot be run: %v", link, err)
	}
	return link, nil
}

// agentShell runs the system's bash with args in a domain of its own.
func agentShell(args []string, env Env) int {
	shell, err := exec.LookPath("bash")
	if err != nil {
		shell, err = exec.LookPath("sh")
	}
	if err == nil {
		// a domain that takes nothing away: everything beneath /
		err = sandbox.Exec(sandbox.Policy{ReadWrite: []string{"/"}}, append([]string{shell}, args...), os.Environ())
	}
	fmt.Fprintf(env.Stderr, "baton: the command could not be started in a sandbox domain of its own: %v\n", err)
	return sandboxExit
}
