package cli

import (
	"strings"
	"testing"
	"time"
)

func TestProgressText(t *testing.T) {
	label := "[baton run] IMPLEMENT F001 session 2"
	if got := progressText(label, 3*time.Second, ""); got != label+" — 3s" {
		t.Errorf("no output yet: %q", got)
	}
	got := progressText(label, time.Minute, "Bash: git commit\x1b[2J\x07 -m 'x'")
	if strings.ContainsAny(got, "\x1b\x07") || !strings.HasSuffix(got, "— 1m0s — Bash: git commit?[2J? -m 'x'") {
		t.Errorf("control characters must not reach the terminal: %q", got)
	}
	long := progressText(label, time.Second, strings.Repeat("é", 200))
	if n := len([]rune(strings.TrimPrefix(long, label+" — 1s — "))); n != maxProgressText || !strings.HasSuffix(long, "…") {
		t.Errorf("a long line is cut to %d runes with an ellipsis: %d runes", maxProgressText, n)
	}
}

func TestShellProgram(t *testing.T) {
	for cmdline, want := range map[string]string{
		"claude -p":                      "claude",
		"  my-agent --stdin":             "my-agent",
		"'quoted-agent' x":               "quoted-agent",
		"/usr/local/bin/codex exec -":    "/usr/local/bin/codex",
		"FOO=1 agent":                    "",
		"cat > prompt.txt; echo done":    "cat",
		"exit 3":                         "",
		"true":                           "",
		"$AGENT -p":                      "",
		"(cd sub && agent)":              "",
		"":                               "",
		"sh -c 'cat >/dev/null'":         "sh",
		"no-such-agent-cli -p --verbose": "no-such-agent-cli",
	} {
		if got := shellProgram(cmdline); got != want {
			t.Errorf("shellProgram(%q) = %q, want %q", cmdline, got, want)
		}
	}
}

func TestExecSimple(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"sh agent.sh", "exec sh agent.sh"},
		{"./agent.sh --fast", "exec ./agent.sh --fast"},
		{"sh $WORK/agent.sh", "exec sh $WORK/agent.sh"},
		{"sh ${WORK}/agent.sh", "exec sh ${WORK}/agent.sh"},
		{"cat >/dev/null; baton session end", "cat >/dev/null; baton session end"},
		{"a && b", "a && b"},
		{"a | b", "a | b"},
		{"echo $(id)", "echo $(id)"},
		{"run `id`", "run `id`"},
		{"X=1 agent", "X=1 agent"},
		{"exit 3", "exit 3"},
		{"", ""},
		{"agent\nother", "agent\nother"},
	} {
		if got := execSimple(tc.in); got != tc.want {
			t.Errorf("execSimple(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
