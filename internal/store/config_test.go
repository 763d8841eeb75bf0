package store_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// withConfig returns a store whose .baton/config holds data (no file when
// data is nil).
func withConfig(t *testing.T, data []byte) *store.Store {
	t.Helper()
	s := store.New(t.TempDir())
	if data != nil {
		mkdirs(t, s.BatonDir())
		if err := os.WriteFile(s.ConfigPath(), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestLoadConfigDefaults(t *testing.T) {
	want := store.Config{MaxFixCycles: 3, ArchitectureInterval: 5, TechDebtThreshold: 5, MaxErrorRetries: 2, LockTimeoutSeconds: 10, MergeNoFF: true, Agents: 1}
	if got := store.DefaultConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultConfig = %+v, want the seed's %+v", got, want)
	}
	for name, data := range map[string][]byte{"no file": nil, "empty object": []byte("{}\n"), "null": []byte("null")} {
		got, err := withConfig(t, data).LoadConfig()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: LoadConfig = %+v, %v, want defaults", name, got, err)
		}
	}
	s := store.New("/state")
	if s.ConfigPath() != filepath.Join("/state", ".baton", "config") {
		t.Errorf("ConfigPath = %q", s.ConfigPath())
	}
}

func TestLoadConfigOverrides(t *testing.T) {
	tests := []struct {
		name, data string
		want       store.Config
	}{
		{"one field", `{"max_fix_cycles": 5}`, store.Config{MaxFixCycles: 5, ArchitectureInterval: 5, TechDebtThreshold: 5, MaxErrorRetries: 2, LockTimeoutSeconds: 10, MergeNoFF: true, Agents: 1}},
		{"two fields and an unknown key", `{"architecture_interval": 8, "lock_timeout_seconds": 30, "future_key": [1]}`,
			store.Config{MaxFixCycles: 3, ArchitectureInterval: 8, TechDebtThreshold: 5, MaxErrorRetries: 2, LockTimeoutSeconds: 30, MergeNoFF: true, Agents: 1}},
		{"agents and a gate", `{"agents": 4, "gate": {"command": "make test"}}`,
			store.Config{MaxFixCycles: 3, ArchitectureInterval: 5, TechDebtThreshold: 5, MaxErrorRetries: 2, LockTimeoutSeconds: 10, MergeNoFF: true, Agents: 4,
				Gate: workflow.Gate{Command: "make test", Timeout: "20m", Batch: 1}}},
		{"every field", `{"max_fix_cycles": 1, "architecture_interval": 2, "tech_debt_threshold": 3, "max_error_retries": 0, "lock_timeout_seconds": 4}`,
			store.Config{MaxFixCycles: 1, ArchitectureInterval: 2, TechDebtThreshold: 3, MaxErrorRetries: 0, LockTimeoutSeconds: 4, MergeNoFF: true, Agents: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := withConfig(t, []byte(tt.data)).LoadConfig()
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("LoadConfig = %+v, %v, want %+v", got, err, tt.want)
			}
		})
	}
}

func TestLoadConfigRejects(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string // parts of the message
	}{
		{"trailing comma", "{\n  \"max_fix_cycles\": 3,\n}\n", []string{"line 3, column 1", "delete it to use the defaults"}},
		{"truncated", "{\"max_fix_cycles\": ", []string{"line 1, column"}},
		{"not JSON", "max_fix_cycles = 3\n", []string{"line 1, column 1"}},
		{"string value", `{"max_fix_cycles": "3"}`, []string{"max_fix_cycles"}},
		{"float value", `{"tech_debt_threshold": 2.5}`, []string{"tech_debt_threshold"}},
		{"array", `[]`, []string{"config"}},
		{"zero fix cycles", `{"max_fix_cycles": 0}`, []string{"max_fix_cycles must be at least 1, found 0"}},
		{"negative interval", `{"architecture_interval": -2}`, []string{"architecture_interval must be at least 1, found -2"}},
		{"zero debt threshold", `{"tech_debt_threshold": 0}`, []string{"tech_debt_threshold must be at least 1"}},
		{"zero lock timeout", `{"lock_timeout_seconds": 0}`, []string{"lock_timeout_seconds must be at least 1"}},
		{"negative retries", `{"max_error_retries": -1}`, []string{"max_error_retries"}},
		{"zero agents", `{"agents": 0}`, []string{"agents must be at least 1, found 0"}},
		{"agents as a string", `{"agents": "4"}`, []string{"agents"}},
		{"a gate without a command", `{"gate": {"timeout": "5m"}}`, []string{"gate.command must name the command"}},
		{"a gate timeout that is no duration", `{"gate": {"command": "make test", "timeout": "soon"}}`, []string{"gate.timeout must be a duration"}},
		{"a negative gate batch", `{"gate": {"command": "make test", "batch": -2}}`, []string{"gate.batch must be at least 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := withConfig(t, []byte(tt.data))
			got, err := s.LoadConfig()
			if err == nil {
				t.Fatalf("LoadConfig = %+v, want an error", got)
			}
			if errs.KindOf(err) != errs.Invalid || errs.Code(err) != errs.ExitInvalid {
				t.Errorf("kind %v, want invalid state", errs.KindOf(err))
			}
			if !strings.Contains(err.Error(), s.ConfigPath()) {
				t.Errorf("message %q does not name the file", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadConfigUnreadable(t *testing.T) {
	s := store.New(t.TempDir())
	mkdirs(t, s.ConfigPath()) // a directory where the file should be
	if _, err := s.LoadConfig(); err == nil {
		t.Error("LoadConfig of a directory succeeded")
	}
}

// WriteFileAtomic is tested here with the other pure file helpers.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "progress.json")
	if err := store.WriteFileAtomic(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()

	if err := store.WriteFileAtomic(path, []byte("new content\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new content\n" {
		t.Errorf("content = %q, %v", got, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, %v, want 0600", fi.Mode(), err)
	}
	// The file was replaced, not rewritten in place: a reader that had it
	// open still sees the old bytes whole.
	if b, err := io.ReadAll(old); err != nil || !bytes.Equal(b, []byte("old\n")) {
		t.Errorf("open reader sees %q, %v, want the old content", b, err)
	}
	assertOnly(t, dir, "progress.json")
}

func TestWriteFileAtomicFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	if err := store.WriteFileAtomic(filepath.Join(dir, "missing", "x.json"), []byte("x"), 0o644); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	// Replacing a directory fails at the rename; the temp file is removed.
	mkdirs(t, filepath.Join(dir, "taken"))
	if err := os.WriteFile(filepath.Join(dir, "taken", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := store.WriteFileAtomic(filepath.Join(dir, "taken"), []byte("x"), 0o644)
	if err == nil || !strings.Contains(err.Error(), "taken") {
		t.Errorf("replacing a directory: %v", err)
	}
	assertOnly(t, dir, "taken")
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("directory holds %v, want only %v (no temp files)", got, names)
	}
}

func TestAgentModelFor(t *testing.T) {
	c := store.AgentConfig{Model: "sonnet", Models: store.RoleModels{Review: "opus", GlobalFix: "haiku"}}
	for role, want := range map[string]string{"REVIEW": "opus", "review": "opus", "GLOBAL_FIX": "haiku", "IMPLEMENT": "sonnet", "FIX": "sonnet"} {
		if got := c.ModelFor(role); got != want {
			t.Errorf("ModelFor(%s) = %q, want %q", role, got, want)
		}
	}
	if got := (store.AgentConfig{}).ModelFor("REVIEW"); got != "" {
		t.Errorf("no model configured: %q, want the CLI's default", got)
	}
}

func TestLoadConfigSandboxHosts(t *testing.T) {
	got, err := withConfig(t, []byte(`{"sandbox_hosts": ["registry.npmjs.org", "*.pypi.org", "proxy.golang.org:443"]}`)).LoadConfig()
	if err != nil || len(got.SandboxHosts) != 3 {
		t.Fatalf("LoadConfig = %+v, %v", got.SandboxHosts, err)
	}
	for _, bad := range []string{`""`, `"https://registry.npmjs.org"`, `"a b"`, `"user@host"`} {
		_, err := withConfig(t, []byte(`{"sandbox_hosts": [`+bad+`]}`)).LoadConfig()
		if err == nil || !strings.Contains(err.Error(), "sandbox_hosts[0]") {
			t.Errorf("sandbox_hosts [%s]: %v, want a refusal naming the entry", bad, err)
		}
	}
}
