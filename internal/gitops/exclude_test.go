package gitops

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWithExcludes(t *testing.T) {
	tests := []struct {
		name, old string
		patterns  []string
		want      string
		added     []string
	}{
		{"empty file", "", []string{"/a", "/b"}, "# c\n/a\n/b\n", []string{"/a", "/b"}},
		{"no final newline", "*.log", []string{"/a"}, "*.log\n# c\n/a\n", []string{"/a"}},
		{"some present", "/a\n", []string{"/a", "/b"}, "/a\n# c\n/b\n", []string{"/b"}},
		{"all present, spaces around", "  /a \n/b\n", []string{"/a", "/b"}, "  /a \n/b\n", nil},
		{"a pattern given twice", "", []string{"/a", "/a"}, "# c\n/a\n", []string{"/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, added := WithExcludes([]byte(tt.old), "# c", tt.patterns)
			if string(got) != tt.want || !slices.Equal(added, tt.added) {
				t.Errorf("WithExcludes = %q, %v; want %q, %v", got, added, tt.want, tt.added)
			}
		})
	}
}

func TestExcludePatterns(t *testing.T) {
	names := []string{"progress.json", ".baton/"}
	if got := ExcludePatterns("/p", "/p", names); !slices.Equal(got, []string{"/progress.json", "/.baton/"}) {
		t.Errorf("at the top: %v", got)
	}
	if got := ExcludePatterns("/p", "/p/agent state", names); !slices.Equal(got, []string{"/agent state/progress.json", "/agent state/.baton/"}) {
		t.Errorf("below the top: %v", got)
	}
	if got := ExcludePatterns("/p", "/q", names); got != nil {
		t.Errorf("outside the worktree: %v", got)
	}
}

func TestExcludeIdempotentAndShared(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	added, err := Exclude(state, "# baton", []string{"progress.json"})
	if err != nil || !slices.Equal(added, []string{"/state/progress.json"}) {
		t.Fatalf("first Exclude = %v, %v", added, err)
	}
	added, err = Exclude(state, "# baton", []string{"progress.json"})
	if err != nil || added != nil {
		t.Fatalf("second Exclude = %v, %v; want nothing added", added, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude"))
	if string(b) != "# baton\n/state/progress.json\n" {
		t.Fatalf("info/exclude = %q", b)
	}
	if added, err := Exclude(t.TempDir(), "# baton", []string{"x"}); err != nil || added != nil {
		t.Fatalf("outside a repository: %v, %v", added, err)
	}
}
