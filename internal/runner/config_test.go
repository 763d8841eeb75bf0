package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	box := Runner{Name: "box1", SSH: "agent@box1", Slots: 2}
	tests := []struct {
		name string
		rs   []Runner
		want string // "" for valid
	}{
		{"none", nil, ""},
		{"one", []Runner{box}, ""},
		{"local entry", []Runner{box, {Name: Local, Slots: 0}}, ""},
		{"auto", []Runner{{Name: "b", SSH: "b", Slots: 1, Sandbox: SandboxAuto, Port: 2222, SSHConfig: "/etc/ssh/x"}}, ""},
		{"no name", []Runner{{SSH: "a@b", Slots: 1}}, "runners[0].name"},
		{"bad name", []Runner{{Name: "a b", SSH: "a@b", Slots: 1}}, "runners[0].name"},
		{"no ssh", []Runner{{Name: "b", Slots: 1}}, "runners[0].ssh: runner \"b\" needs an SSH destination"},
		{"option as ssh", []Runner{{Name: "b", SSH: "-oProxyCommand=x", Slots: 1}}, "runners[0].ssh"},
		{"shell in ssh", []Runner{{Name: "b", SSH: "a@b;rm", Slots: 1}}, "runners[0].ssh"},
		{"space in ssh", []Runner{{Name: "b", SSH: "a@b -p1", Slots: 1}}, "runners[0].ssh"},
		{"no slots", []Runner{box, {Name: "c", SSH: "c", Slots: 0}}, "runners[1].slots"},
		{"negative local", []Runner{{Name: Local, Slots: -1}}, "runners[0].slots"},
		{"local with ssh", []Runner{{Name: Local, SSH: "x", Slots: 1}}, "runners[0]: the runner named \"local\""},
		{"bad sandbox", []Runner{{Name: "b", SSH: "b", Slots: 1, Sandbox: "off"}}, "runners[0].sandbox"},
		{"bad port", []Runner{{Name: "b", SSH: "b", Slots: 1, Port: 70000}}, "runners[0].port"},
		{"option as config", []Runner{{Name: "b", SSH: "b", Slots: 1, SSHConfig: "-oX"}}, "runners[0].ssh_config"},
		{"twice", []Runner{box, box}, "runners[1].name: \"box1\" is named twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.rs)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestLineupAndPick(t *testing.T) {
	a := Runner{Name: "a", SSH: "a", Slots: 2}
	b := Runner{Name: "b", SSH: "b", Slots: 1}
	local0 := Runner{Name: Local, Slots: 0}
	tests := []struct {
		name string
		rs   []Runner
		busy map[string]int
		down map[string]bool
		want string // "" for no slot free
	}{
		{"no runners: local, always", nil, map[string]int{Local: 50}, nil, Local},
		{"local first by default", []Runner{a, b}, nil, nil, Local},
		{"local full: the first runner", []Runner{a, b}, map[string]int{Local: 1}, nil, "a"},
		{"first runner full: the next", []Runner{a, b}, map[string]int{Local: 1, "a": 2}, nil, "b"},
		{"all full", []Runner{a, b}, map[string]int{Local: 1, "a": 2, "b": 1}, nil, ""},
		{"a down", []Runner{a, b}, map[string]int{Local: 1}, map[string]bool{"a": true}, "b"},
		{"local placed last", []Runner{a, {Name: Local, Slots: 3}}, nil, nil, "a"},
		{"local placed last, a full", []Runner{a, {Name: Local, Slots: 3}}, map[string]int{"a": 2}, nil, Local},
		{"local with no slots", []Runner{local0, b}, map[string]int{"b": 1}, nil, ""},
		{"all down but local", []Runner{a, b}, nil, map[string]bool{"a": true, "b": true}, Local},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Pick(Lineup(tt.rs), tt.busy, tt.down)
			if (tt.want == "") == ok || (ok && got.Name != tt.want) {
				t.Fatalf("Pick = %q, %v; want %q", got.Name, ok, tt.want)
			}
		})
	}
	if n := Slots(Lineup([]Runner{a, b})); n != 4 {
		t.Errorf("Slots = %d, want 4 (local's default 1, a's 2, b's 1)", n)
	}
}

func TestCheckRoot(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(`{"login":"runner user"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(home, "v", "/usr/bin/baton", "", "0123456789abcdef", 3, "n", "e")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(p.Home, ".claude", ".credentials.json")); err != nil || !strings.Contains(string(b), "runner user") {
		t.Errorf("the runner user's Claude Code login was not copied into the agent's home: %q, %v", b, err)
	}
	if p.Baton != "/usr/bin/baton" || p.Relay != p.Root+"/relay" || p.Protocol != Protocol {
		t.Errorf("Prepare's place = %+v", p)
	}
	good := p.Root
	again, err := Prepare(home, "v", "", "", "0123456789abcdef", 3, "n", "e")
	if err != nil || again.Root == good {
		t.Fatalf("a second Prepare of session 3 = %q, %v: want a place of another name", again.Root, err)
	}
	if _, err := os.Stat(good); !os.IsNotExist(err) {
		t.Errorf("a second Prepare of session 3 left the first place: %v", err)
	}
	for _, root := range []string{home, base(home), base(home) + "/0123456789abcdef", good, again.Root + "/..", again.Root + "/repo", "/etc",
		base(home) + "/0123456789abcdef/session-3", base(home) + "/../runner/" + filepath.Base(filepath.Dir(again.Root)) + "/" + filepath.Base(again.Root) + "x"} {
		if err := checkRoot(home, root); err == nil {
			t.Errorf("checkRoot(%q) took it as a lane's place", root)
		}
	}
	if err := checkRoot(home, again.Root); err != nil {
		t.Errorf("checkRoot(%q) = %v", again.Root, err)
	}
	if _, err := Prepare(home, "v", "", "", "../../etc", 1, "", ""); err == nil {
		t.Error("Prepare took a project key that leads out of the runner's directory")
	}
}

func TestAgentEnv(t *testing.T) {
	p := Place{Sock: "/r/sock", Relay: "/r/relay", Tmp: "/r/tmp", Home: "/r/home"}
	env := AgentEnv([]string{"PATH=/bin", "BATON_SESSION=secret", "BATON_STATE_DIR=/state-dir", "HOME=/home/u", "XDG_CONFIG_HOME=/xdg", "AGENT_STATE_DIR=/agent-state",
		"SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/9/bus"}, p)
	joined := strings.Join(env, "\n")
	for _, bad := range []string{"secret", "/home/u", "/state-dir", "/xdg", "/agent-state", "/tmp/ssh-x", "/run/user/9/bus"} {
		if strings.Contains(joined, bad) {
			t.Errorf("the agent's environment keeps %q:\n%s", bad, joined)
		}
	}
	for _, want := range []string{"PATH=/bin", "BATON_BROKER=/r/relay", "TMPDIR=/r/tmp", "HOME=/r/home"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the agent's environment lacks %q:\n%s", want, joined)
		}
	}
}

// unquote splits a line Quote wrote the way a POSIX shell does: words in
// single quotes, '\” for a quote, separated by spaces.
func unquote(s string) ([]string, bool) {
	var out []string
	for len(s) > 0 {
		var w strings.Builder
		if s[0] != '\'' {
			return nil, false
		}
		for len(s) > 0 && s[0] != ' ' {
			switch {
			case s[0] == '\'':
				end := strings.IndexByte(s[1:], '\'')
				if end < 0 {
					return nil, false
				}
				w.WriteString(s[1 : 1+end])
				s = s[2+end:]
			case strings.HasPrefix(s, `\'`):
				w.WriteByte('\'')
				s = s[2:]
			default:
				return nil, false
			}
		}
		out = append(out, w.String())
		s = strings.TrimPrefix(s, " ")
	}
	return out, true
}

// FuzzQuote holds that every argument list comes back whole from the
// remote shell's reading of Quote's line.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"sh\x00-c\x00echo 'hi'", "a b\x00$(rm -rf /)\x00`x`", "'\x00''\x00\\'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		argv := strings.Split(joined, "\x00")
		got, ok := unquote(Quote(argv))
		if !ok || strings.Join(got, "\x00") != joined {
			t.Fatalf("Quote(%q) = %q, read back as %q", argv, Quote(argv), got)
		}
	})
}

// FuzzValidate holds that a runners list Validate accepts has SSH
// destinations ssh cannot read as an option and no shell could split.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{`[{"name":"box1","ssh":"agent@box1","slots":4}]`, `[{"name":"local","slots":0},{"name":"b","ssh":"-oX","slots":1}]`, `[{"name":"b","ssh":"a@b c","slots":1}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var rs []Runner
		if json.Unmarshal([]byte(data), &rs) != nil || Validate(rs) != nil {
			return
		}
		for _, r := range rs {
			if strings.HasPrefix(r.SSH, "-") || strings.ContainsAny(r.SSH, " \t\n;|&$`'\"") || strings.HasPrefix(r.SSHConfig, "-") {
				t.Fatalf("Validate took %+v", r)
			}
			if r.Remote() && (r.SSH == "" || r.Slots < 1) {
				t.Fatalf("Validate took a runner with no destination or slot: %+v", r)
			}
		}
	})
}
