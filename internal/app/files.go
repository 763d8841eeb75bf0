package app

import (
	"os"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/store"
)

// BridgeDir is the state directory the agent bridge's files live in: the
// state directory as discovered, without --file (which names a state file,
// not a bridge file) and without opening anything.
func (a *App) BridgeDir() string {
	dir, _ := store.Discover(store.Locate{StateDir: a.g.StateDir, Getenv: a.env.Getenv, Cwd: a.env.Cwd})
	return dir
}

// WriteFile writes data to path atomically: a temporary file renamed over
// it, so that a reader sees the old file or the new one, never part.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return store.WriteFileAtomic(path, data, perm)
}

// ReadRegular reads path when it is a regular file ((nil, nil) when it
// does not exist); a symbolic link or a device is refused.
func ReadRegular(path string) ([]byte, error) { return store.ReadRegular(path) }

// HostOnly refuses what belongs to the host that runs the orchestrator (a
// bridge request's answer, the resume of a run) to a caller bound to an
// agent session: an agent at work leaves the answer to its host.
func HostOnly(c Caller, what string) error {
	if c.Session == "" {
		return nil
	}
	return errs.New(errs.Policy, "%s is refused inside an agent session: the host that runs the orchestrator answers its requests and resumes it. Finish your work, end your session as your prompt says, and leave the answer to your host", what)
}
