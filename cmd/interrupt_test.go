package cmd

import (
	"strings"
	"testing"
)

// Every command readOnly names exists: a renamed read leaves no entry
// behind (the renamed command, missing from the list, is trapped as a
// write would be, which is safe but slower).
func TestReadOnlyCommandsExist(t *testing.T) {
	a := newApp(Env{Getenv: func(string) string { return "" }})
	root := a.newRootCmd()
	for path := range readOnly {
		c, rest, err := root.Find(strings.Fields(path)[1:])
		if err != nil || len(rest) > 0 || c.CommandPath() != path {
			t.Errorf("readOnly names %q, which is not a command", path)
		}
	}
}
