package cli

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// predecessorShorts are the short flags that name different long flags in
// different commands, each kept because the predecessor's scripts (and the
// prompts written for them) use it in both meanings. Any other short flag
// means one thing everywhere. The README lists the same table.
var predecessorShorts = map[string][]string{
	"c": {"count", "feature-count"},      // features next-candidates -c N · progress init -c COUNT
	"n": {"name", "project-name"},        // init -n NAME · progress init -n NAME
	"r": {"failure-reason", "review-id"}, // features fail -r REASON · reviews add-fix -r REVIEW_ID
	"o": {"outcome", "output"},           // add-session/session end -o OUTCOME · report -o FILE
	"s": {"source-appspec", "summary"},   // features append -s SOURCE · add-session/add-review/session end -s SUMMARY
}

func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

func testRoot() *cobra.Command {
	a := &App{env: Env{Getenv: func(string) string { return "" }, Cwd: filepath.Join(os.TempDir(), "baton-help-test-never-created")}}
	return a.newRootCmd()
}

// TestFlagsNoShadowing: no command's own flag takes the name or the short
// form of a global flag.
func TestFlagsNoShadowing(t *testing.T) {
	root := testRoot()
	globals := root.PersistentFlags()
	walk(root, func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if c == root {
				return
			}
			if globals.Lookup(f.Name) != nil {
				t.Errorf("%s: --%s shadows the global --%s", c.CommandPath(), f.Name, f.Name)
			}
			if f.Shorthand != "" && globals.ShorthandLookup(f.Shorthand) != nil {
				t.Errorf("%s: -%s (--%s) shadows the global -%s", c.CommandPath(), f.Shorthand, f.Name, f.Shorthand)
			}
		})
	})
}

// TestShortFlagsOneMeaning: a short flag names one long flag everywhere,
// except the predecessor's documented pairs.
func TestShortFlagsOneMeaning(t *testing.T) {
	longs := map[string]map[string][]string{}
	walk(testRoot(), func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Shorthand == "" {
				return
			}
			if longs[f.Shorthand] == nil {
				longs[f.Shorthand] = map[string][]string{}
			}
			longs[f.Shorthand][f.Name] = append(longs[f.Shorthand][f.Name], c.CommandPath())
		})
	})
	for short, names := range longs {
		if len(names) < 2 {
			continue
		}
		var got []string
		for n := range names {
			got = append(got, n)
		}
		sort.Strings(got)
		want := predecessorShorts[short]
		for _, n := range got {
			if !slices.Contains(want, n) {
				t.Errorf("-%s means --%s in %v (it also means %v): a short flag must mean one thing", short, n, names[n], got)
			}
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for short, names := range predecessorShorts {
		for _, n := range names {
			if !strings.Contains(string(readme), "`-"+short+"` "+"`--"+n+"`") {
				t.Errorf("README does not document -%s as --%s", short, n)
			}
		}
	}
}

// TestEveryCommandHasExamples: every command's help has an example, and
// every example line that runs baton names a real command with flags it
// takes and an argument count it accepts.
func TestEveryCommandHasExamples(t *testing.T) {
	root := testRoot()
	walk(root, func(c *cobra.Command) {
		if c.Name() == cobra.ShellCompRequestCmd || c.Name() == cobra.ShellCompNoDescRequestCmd {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no example (add one to the examples table in cmd/help.go)", c.CommandPath())
		}
		for _, line := range exampleCommands(c.Example) {
			checkExample(t, c.CommandPath(), line)
		}
	})
	for key := range examples {
		if c, rest, err := testRoot().Find(strings.Fields(key)); err != nil || len(rest) > 0 || commandKey(c) != key {
			t.Errorf("examples table names %q, which is no command", key)
		}
	}
}

// exampleCommands are the lines of an example that run baton, joined over
// backslash continuations.
func exampleCommands(ex string) []string {
	var out []string
	ex = strings.ReplaceAll(ex, "\\\n", " ")
	for _, l := range strings.Split(ex, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "baton ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

func checkExample(t *testing.T, where, line string) {
	t.Helper()
	args, err := shellWords(line)
	if err != nil {
		t.Errorf("%s: example %q: %v", where, line, err)
		return
	}
	root := testRoot()
	c, rest, err := root.Find(rewriteArgs(args[1:]))
	if err != nil {
		t.Errorf("%s: example %q: %v", where, line, err)
		return
	}
	if err := c.ParseFlags(rest); err != nil {
		t.Errorf("%s: example %q: %v", where, line, err)
		return
	}
	if c == root && root.Flags().Lookup("version").Changed {
		return
	}
	if err := c.ValidateArgs(c.Flags().Args()); err != nil {
		t.Errorf("%s: example %q: %v", where, line, err)
	}
}

// shellWords splits a command line as sh does for quotes and spaces, up to
// an unquoted comment, pipe or redirection.
func shellWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0 && ch == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(ch)
		case ch == '\'' || ch == '"':
			quote, in = ch, true
		case !in && (ch == '#' || ch == '|' || ch == '<' || ch == '>'):
			return out, nil
		case ch == ' ' || ch == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if quote != 0 {
		return nil, errUnclosedQuote
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}

var errUnclosedQuote = &os.PathError{Op: "split", Path: "example", Err: os.ErrInvalid}

// TestEveryCommandHasSchema: every command's --json document has a
// published schema, and every schema names a command.
func TestEveryCommandHasSchema(t *testing.T) {
	root := testRoot()
	seen := map[string]bool{"error": true, "version": true}
	walk(root, func(c *cobra.Command) {
		key := commandKey(c)
		switch {
		case c == root || c.Hidden || c.Name() == cobra.ShellCompRequestCmd || c.Name() == cobra.ShellCompNoDescRequestCmd:
			return
		case c.HasSubCommands() && c.Name() != "demo":
			return // a group: it only says which subcommands it has
		case strings.HasPrefix(key, "completion "):
			key = "completion"
		}
		seen[key] = true
		if _, ok := Schema(key); !ok {
			t.Errorf("%s has no JSON Schema (add it to the schemas table in cmd/schema.go)", c.CommandPath())
		}
	})
	for _, name := range schemaNames() {
		if !seen[name] && name != "completion" {
			t.Errorf("schema %q names no command", name)
		}
	}
}
