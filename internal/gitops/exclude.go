package gitops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WithExcludes returns the text of an info/exclude file that held old with
// the patterns it lacks appended under a comment line, and the patterns
// added (none: old is returned as it was).
func WithExcludes(old []byte, comment string, patterns []string) ([]byte, []string) {
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add []string
	for _, p := range patterns {
		if !have[p] {
			add = append(add, p)
			have[p] = true
		}
	}
	if len(add) == 0 {
		return old, nil
	}
	text := string(old)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text += comment + "\n" + strings.Join(add, "\n") + "\n"
	return []byte(text), add
}

// ExcludePatterns are the info/exclude patterns for names (files, or
// directories ending in "/") that live in dir, a directory inside the
// worktree whose top is top: anchored at the top ("/progress.json", or
// "/state/progress.json" for a state directory below it). It returns nil
// when dir is not inside top.
func ExcludePatterns(top, dir string, names []string) []string {
	rel, err := filepath.Rel(top, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil
	}
	prefix := "/"
	if rel != "." {
		prefix += filepath.ToSlash(rel) + "/"
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// Exclude lists names (relative to dir) in the info/exclude of the
// repository enclosing dir — the common one, which every linked worktree
// reads — so that no 'git add .' or 'git add NAME' stages them and no
// checkout or merge rewrites them. It is idempotent and returns the
// patterns it added; outside a repository it does nothing.
func Exclude(dir, comment string, names []string) ([]string, error) {
	loc, err := Locate(dir)
	if err != nil {
		return nil, nil // not in a repository: nothing to keep out of git
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	patterns := ExcludePatterns(loc.Top, abs, names)
	if patterns == nil {
		return nil, nil
	}
	path := filepath.Join(loc.CommonDir, "info", "exclude")
	// read and replaced under info/exclude.lock, so that two batons adding
	// their patterns at once do not lose one's (git never writes the file)
	unlock, err := lockWaiting(path, loc.CommonDir)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w (is another baton adding its patterns?)", path, err)
	}
	defer unlock()
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	text, add := WithExcludes(old, comment, patterns)
	if len(add) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return add, writeAtomic(path, text)
}

// writeAtomic replaces path by a synced temporary file beside it.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".exclude-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
