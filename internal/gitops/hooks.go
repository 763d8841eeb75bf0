package gitops

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/config"
)

// Hooks that guard main: git refuses a commit onto main, a merge commit
// onto main, and any other update of refs/heads/<main> (a fast-forward
// merge, a reset, a cherry-pick). They honour no switch an agent could set
// (an environment variable or a git setting would be one): they advise,
// and what enforces is baton's own check, which refuses the next write
// after main moved outside a recorded merge until a person records the
// move with their key. baton's own merge writes its objects through go-git
// and its refs itself, with no git command, so the hooks do not fire for it.

// HookMarker marks a hook file baton wrote; a hook without it is someone
// else's and is never overwritten.
const HookMarker = "# baton-hook: installed by 'baton init --hooks'"

// HookNames are the hooks baton installs.
var HookNames = []string{"pre-commit", "pre-merge-commit", "reference-transaction"}

// ForeignHooksError means hooks baton did not write are in the way.
type ForeignHooksError struct{ Paths []string }

func (e *ForeignHooksError) Error() string {
	return fmt.Sprintf("hooks baton did not write are installed: %s — nothing was installed; merge baton's checks into them yourself, or move them away and run 'baton init --hooks' again", strings.Join(e.Paths, ", "))
}

// HooksDir is where git runs the repository's hooks from: core.hooksPath
// when set (relative to the main worktree's top), else the common git
// directory's hooks/.
func HooksDir(r Repo) (string, error) {
	g, ok := r.(*repo)
	if !ok {
		return "", ErrNoRepository
	}
	top := g.loc.Top
	if filepath.Base(g.loc.CommonDir) == ".git" {
		top = filepath.Dir(g.loc.CommonDir)
	}
	cfg, err := g.r.ConfigScoped(config.GlobalScope)
	if err != nil {
		return "", fmt.Errorf("reading the git config: %w", err)
	}
	if p := cfg.Raw.Section("core").Option("hooksPath"); p != "" {
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[2:])
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(top, p)
		}
		return filepath.Clean(p), nil
	}
	return filepath.Join(g.loc.CommonDir, "hooks"), nil
}

// InstallHooks writes baton's hooks guarding main into dir. Hooks that
// baton wrote before are updated; any other hook in the way refuses the
// whole install (a *ForeignHooksError) before anything is written.
func InstallHooks(dir, main string) ([]string, error) {
	var foreign []string
	for _, n := range HookNames {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err == nil && !strings.Contains(string(b), HookMarker) {
			foreign = append(foreign, filepath.Join(dir, n))
		}
	}
	if len(foreign) > 0 {
		return nil, &ForeignHooksError{Paths: foreign}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, n := range HookNames {
		p := filepath.Join(dir, n)
		if err := placeHook(p, hookScript(n, main)); err != nil {
			return written, err
		}
		written = append(written, p)
	}
	return written, nil
}

// placeHook writes the hook at path, under path.lock: the hook there is
// read again under the lock, and one a person or another tool installed
// since InstallHooks looked is kept (a *ForeignHooksError). The script is
// written whole into a temp file beside it and renamed over it.
func placeHook(path, script string) error {
	unlock, err := lockWaiting(path, filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("locking %s: %w (is another baton installing hooks?)", path, err)
	}
	defer unlock()
	if b, err := os.ReadFile(path); err == nil && !strings.Contains(string(b), HookMarker) {
		return &ForeignHooksError{Paths: []string{path}}
	}
	f, err := createTemp(filepath.Dir(path), tempPrefix)
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.WriteString(script)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o755) // executable whatever the umask
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// hookScript is the shell script of one hook.
func hookScript(name, main string) string {
	head := "#!/bin/sh\n" + HookMarker + "\n" +
		"# Guards the main branch: work reaches it only through 'baton reviews merge'.\n" +
		"# Re-run 'baton init --hooks' to update.\n" +
		"main=" + shellQuote(main) + "\n"
	advice := "Work goes on a branch ('baton branch create NAME', then 'git switch NAME') and reaches $main\n" +
		"only through 'baton reviews merge', which REVIEW runs after a passing review: commit your\n" +
		"work on your branch, end your session, and leave the merge to REVIEW.\n"
	if name == "reference-transaction" {
		return head + `[ "$1" = prepared ] || exit 0
refused=
while read -r old new ref; do
	if [ "$ref" = "refs/heads/$main" ] && [ "$old" != "$new" ]; then refused="$old -> $new"; fi
done
[ -z "$refused" ] && exit 0
cat >&2 <<EOF
baton: refusing to update refs/heads/$main ($refused).
` + advice + "EOF\nexit 1\n"
	}
	what := "commit onto"
	if name == "pre-merge-commit" {
		what = "make a merge commit on"
	}
	return head + `branch=$(git symbolic-ref --quiet --short HEAD 2>/dev/null) || exit 0
[ "$branch" = "$main" ] || exit 0
cat >&2 <<EOF
baton: refusing to ` + what + ` $main.
` + advice + "EOF\nexit 1\n"
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// StaleHooks lists the hooks in dir that baton wrote but that differ from
// what this baton writes for main (an earlier version's, which may honour
// a switch today's hooks do not).
func StaleHooks(dir, main string) []string {
	var out []string
	for _, n := range HookNames {
		p := filepath.Join(dir, n)
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), HookMarker) && string(b) != hookScript(n, main) {
			out = append(out, p)
		}
	}
	return out
}
