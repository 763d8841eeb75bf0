package app

import (
	"os"

	"github.com/baton-cli/baton/store"
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
