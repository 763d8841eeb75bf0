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
	for path := range readOnly.Get() {
		c, rest, err := root.Find(strings.Fields(path)[1:])
		if err != nil || len(rest) > 0 || c.CommandPath() != path {
			t.Errorf("readOnly names %q, which is not a command", path)
		}
	}
}

// TestGroupRequest: which command group and subcommand the arguments run,
// global flags and their values passed over; a help request builds the
// whole group.
func TestGroupRequest(t *testing.T) {
	for _, c := range []struct {
		args       string
		group, sub string
	}{
		{"progress get-status --field current_branch", "progress", "get-status"},
		{"-d /tmp/x --json reviews get-last", "reviews", "get-last"},
		{"--jq .id features next --type bug", "features", "next"},
		{"--as HUMAN --reason why features pass F1", "features", "pass"},
		{"progress", "progress", ""},
		{"progress get-status --help", "progress", ""},
		{"help progress get-status", "", ""},
		{"session start --agent IMPLEMENT", "", ""},
		{"--state-dir progress status", "", ""},
		{"__complete progress get-", "", ""},
	} {
		g, s := groupRequest(strings.Fields(c.args))
		if g != c.group || s != c.sub {
			t.Errorf("%q: group %q sub %q, want %q %q", c.args, g, s, c.group, c.sub)
		}
	}
}

// TestLazyGroups: each subcommand the lazy groups name is built under
// that name, alone when the arguments run it, and every group's full
// tree has the same subcommands.
func TestLazyGroups(t *testing.T) {
	full := newApp(Env{Getenv: func(string) string { return "" }}).newRootCmd()
	for _, group := range []string{"progress", "reviews", "features"} {
		g, _, err := full.Find([]string{group})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range g.Commands() {
			a := newApp(Env{Getenv: func(string) string { return "" }})
			a.group, a.subName = group, c.Name()
			var built []string
			for _, b := range a.groups()[group]().Commands() {
				built = append(built, b.Name())
			}
			if len(built) != 1 || built[0] != c.Name() {
				t.Errorf("%s %s alone builds %v", group, c.Name(), built)
			}
		}
	}
}
