package cli

import (
	"os"
	"testing"
)

// TestInteractive: only a real terminal with a usable TERM gets the
// redrawn progress line; /dev/null (a character device), files and pipes,
// TERM=dumb or unset, and --json get plain lines.
func TestInteractive(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	file, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tt := range []struct {
		name string
		f    *os.File
		term string
		json bool
	}{
		{"/dev/null", devnull, "xterm", false},
		{"a file", file, "xterm", false},
		{"a pipe", w, "xterm", false},
		{"TERM=dumb", devnull, "dumb", false},
		{"no TERM", devnull, "", false},
		{"--json", devnull, "xterm", true},
	} {
		a := &App{env: Env{Getenv: func(k string) string {
			if k == "TERM" {
				return tt.term
			}
			return ""
		}}}
		a.g.JSON = tt.json
		if a.interactive(tt.f) {
			t.Errorf("%s: treated as an interactive terminal", tt.name)
		}
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		a := &App{env: Env{Getenv: func(k string) string { return map[string]string{"TERM": "xterm"}[k] }}}
		if !a.interactive(tty) {
			t.Errorf("/dev/tty with TERM=xterm is not treated as a terminal")
		}
	}
}
