package cli_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/cli"
)

// bypassHint is what no message an agent can read may say: a way around a
// rule (acting as a person, a role from the environment, the main-branch
// override, editing files by hand, another session, another branch).
var bypassHint = regexp.MustCompile(`(?i)--as\b|BATON_ROLE|BATON_ALLOW_MAIN|by hand|\breconcil|until the run has stopped|baton key\b|(another|a new|a second|new|other) session|session start\b|(different|another|other|right) --branch|--no-verify|key init`)

// personRemedy is what no refusal, warning or notice may name besides: a
// variable of baton's environment, a file of baton's own or the socket of
// its broker. A person learns those from status, verify and the docs.
var personRemedy = regexp.MustCompile(`(?i)\bBATON_(SESSION|STATE_DIR|HOST_TOKEN|BROKER|SANDBOX_UNAVAILABLE)\b|\bAGENT_STATE_DIR\b|\.baton/|events\.jsonl|baton-broker`)

// nameOnly is a constant that is a name (a variable's, a file's), not a
// message: it has no space.
func nameOnly(s string) bool { return !strings.ContainsAny(s, " \t\n") }

// keyCommands are the files of the person-only commands that may name
// 'baton key init': the key commands themselves and the demo.
var keyCommands = map[string]bool{"key.go": true, "demo.go": true}

// messageCalls are the calls whose string arguments become messages,
// by the name called, whatever the receiver (st.app.warn as a.warn).
var messageCalls = map[string]bool{
	"New": true, "Errorf": true, "Sprintf": true, "warn": true, "notice": true, "refuse": true,
	"Warnf": true, "Noticef": true, "Fprintf": true, "Printf": true, "Fprintln": true, "Println": true,
}

// personOnly are messages only a person typing --as (or reading a person's
// command's help) can see: they may name the person's tools.
func personOnly(s string) bool {
	return strings.HasPrefix(s, "--as") || strings.HasPrefix(s, "REMEDY (a person, with the personal key)") || strings.HasPrefix(s, "The personal key is a person's own secret")
}

// TestNoMessageTeachesABypass scans every error, refusal, warning and
// notice baton can produce — the format strings of its message calls, its
// message constants and the git hooks' texts — for bypass hints.
func TestNoMessageTeachesABypass(t *testing.T) {
	root := filepath.Join("..")
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range []string{"cli", "app", "mcpserver", "broker", "sandbox", "migrate", "workflow", "gitops", "store", "../bridge", "progress", "reviews", "features", "prompts", "jsondoc", "errs", "scripts", "agentcli", "ctxpack", "workcopy", "runner"} {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, msg := range messages(f, strings.HasSuffix(path, "hooks.go")) {
				checked++
				hint := bypassHint.FindString(msg.text)
				if hint == "" && !nameOnly(msg.text) {
					hint = personRemedy.FindString(msg.text)
				}
				if (hint == "key init" || strings.EqualFold(hint, "baton key")) && keyCommands[filepath.Base(path)] {
					continue // the person's own key commands, and the demo a person runs
				}
				if !personOnly(msg.text) && hint != "" {
					t.Errorf("%s: message teaches a way around a rule (%q): %q", fset.Position(msg.pos), bypassHint.FindString(msg.text), msg.text)
				}
			}
		}
	}
	py, _ := filepath.Glob(filepath.Join(root, "scripts", "*.py"))
	tmpl, _ := filepath.Glob(filepath.Join(root, "prompts", "templates", "*"))
	for _, path := range append(py, tmpl...) { // what an agent runs or is told
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		m := bypassHint.FindString(string(b))
		if m == "" {
			m = personRemedy.FindString(string(b))
		}
		if m != "" {
			t.Errorf("%s says %q", path, m)
		}
	}
	if checked < 200 {
		t.Fatalf("only %d messages found: the scan does not see baton's messages", checked)
	}
}

type message struct {
	pos  token.Pos
	text string
}

// messages returns the string arguments of message calls, message
// constants, and (all is set, for the hooks) every string literal.
func messages(f *ast.File, all bool) []message {
	var out []message
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if messageCalls[sel.Sel.Name] {
					for _, arg := range n.Args {
						if s, ok := literal(arg); ok {
							out = append(out, message{arg.Pos(), s})
						}
					}
				}
			}
		case *ast.GenDecl:
			if n.Tok == token.CONST {
				for _, spec := range n.Specs {
					for _, v := range spec.(*ast.ValueSpec).Values {
						if s, ok := literal(v); ok {
							out = append(out, message{v.Pos(), s})
						}
					}
				}
			}
		case *ast.BasicLit:
			if all && n.Kind == token.STRING {
				s, _ := strconv.Unquote(n.Value)
				out = append(out, message{n.Pos(), s})
			}
		}
		return true
	})
	return out
}

// literal is the value of a string literal or a concatenation of them
// (other operands are left out).
func literal(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		l, lok := literal(e.X)
		r, rok := literal(e.Y)
		return l + r, lok || rok
	case *ast.ParenExpr:
		return literal(e.X)
	}
	return "", false
}

// TestNoHelpTeachesABypass reads every command's help (as man pages) for
// bypass hints: only person-only commands document a person's override.
func TestNoHelpTeachesABypass(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	env := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Cwd: dir, Now: time.Now, Getenv: func(string) string { return "" }}
	if code := cli.Main([]string{"man", dir}, env); code != 0 {
		t.Fatalf("baton man: exit %d\n%s", code, out.String())
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	if len(pages) < 20 {
		t.Fatalf("only %d man pages", len(pages))
	}
	// person-only commands (land: the launcher's, or a person's), and the shell's own sessions of completion
	personOnlyPages := regexp.MustCompile(`^baton-(key|reconcile|session-start|land|completion)`)
	for _, p := range pages {
		if personOnlyPages.MatchString(filepath.Base(p)) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(b), `\-`, "-")
		m := bypassHint.FindString(text)
		if strings.EqualFold(m, "reconcil") && filepath.Base(p) == "baton.1" {
			continue // the list of every command names reconcile, as it names key
		}
		if m != "" {
			t.Errorf("%s: the help teaches a way around a rule: %q", filepath.Base(p), m)
		}
	}
}

// seedName is a name of the specification's documents, which no user has.
var seedName = regexp.MustCompile(`(?i)\bseeds? ?0\d\d|\bseed's\b|\bthe seeds?\b`)

// TestNoMessageNamesASeed: no string baton prints (every string literal of
// its packages, every command's help) names a document of the
// specification; a message says what the protocol or the file wants.
func TestNoMessageNamesASeed(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range []string{"cli", "app", "mcpserver", "broker", "sandbox", "migrate", "workflow", "gitops", "store", "../bridge", "progress", "reviews", "features", "prompts", "jsondoc", "errs", "scripts", "agentcli", "ctxpack", "workcopy", "runner"} {
		files, _ := filepath.Glob(filepath.Join("..", dir, "*.go"))
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, msg := range messages(f, true) {
				checked++
				if m := seedName.FindString(msg.text); m != "" {
					t.Errorf("%s: a message names %q: %q", fset.Position(msg.pos), m, msg.text)
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d strings found: the scan does not see baton's messages", checked)
	}
	dir := t.TempDir()
	var out bytes.Buffer
	env := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Cwd: dir, Now: time.Now, Getenv: func(string) string { return "" }}
	if code := cli.Main([]string{"man", dir}, env); code != 0 {
		t.Fatalf("baton man: exit %d\n%s", code, out.String())
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := seedName.FindString(string(b)); m != "" {
			t.Errorf("%s: the help names %q", filepath.Base(p), m)
		}
	}
}
