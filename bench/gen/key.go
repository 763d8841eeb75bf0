package gen

import (
	"fmt"
	"os"
	"os/exec"
)

// PersonKey creates a person's key of the bench's own with 'baton key init'
// in a new directory, to be used as XDG_CONFIG_HOME, so that a bench opens
// the sessions it times as a launcher would. The caller removes the
// directory when it is done.
func PersonKey(baton string, env []string) (string, error) {
	dir, err := os.MkdirTemp("", "baton-bench-key-")
	if err != nil {
		return "", err
	}
	k := exec.Command(baton, "key", "init")
	k.Env = append(append([]string(nil), env...), "XDG_CONFIG_HOME="+dir)
	if out, err := k.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("baton key init: %v\n%s", err, out)
	}
	return dir, nil
}
