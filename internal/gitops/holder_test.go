package gitops_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// A lock holding baton's marker is removed as a killed baton's only when
// the process it names is gone: one a running baton holds (another baton
// on the same repository, or this process itself) is kept and refused like
// a git process's lock, as is one of another host; once its holder has
// ended, the next write removes it.
func TestLockOfLiveHolderKept(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no sleep process to hold a lock")
	}
	sleeper := exec.Command("sleep", "60")
	must(t, sleeper.Start())
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	self := gitops.MarkerOf(os.Getpid())
	other := self[:strings.Index(self, " host ")] + " host elsewhere\n"
	left := map[string]string{
		"refs/heads/feature/live.lock": gitops.MarkerOf(sleeper.Process.Pid),
		"refs/heads/feature/self.lock": gitops.MarkerOf(os.Getpid()),
		"refs/heads/feature/far.lock":  other,
		"packed-refs.lock":             gitops.MarkerOf(sleeper.Process.Pid),
	}
	if !strings.Contains(other, "host elsewhere") {
		t.Fatalf("marker %q names no host", other)
	}
	r := leftoverRepo(t, left)
	main := r.git("rev-parse", "main")
	g := r.open()
	must(t, g.CreateBranch("feature/b", main))
	for p := range left {
		if _, err := os.Stat(filepath.Join(r.dir, ".git", filepath.FromSlash(p))); err != nil {
			t.Errorf("%s, held by a live process, was removed: %v", p, err)
		}
	}
	if err := g.DeleteBranch("feature/b", main); !errors.Is(err, gitops.ErrRefLocked) {
		t.Errorf("deleting a branch while a live baton holds packed-refs.lock: %v, want ErrRefLocked", err)
	}
	_ = sleeper.Process.Kill()
	_ = sleeper.Wait()
	must(t, g.DeleteBranch("feature/b", main))
	for p := range left {
		_, err := os.Stat(filepath.Join(r.dir, ".git", filepath.FromSlash(p)))
		if gone := strings.HasSuffix(p, "live.lock") || p == "packed-refs.lock"; errors.Is(err, os.ErrNotExist) != gone {
			t.Errorf("%s after its holder ended: removed %v, want %v", p, err != nil, gone)
		}
	}
}

// A lock naming a running process's id with another start time was left
// by a killed baton whose id the system gave to a later process: removed.
func TestLockOfReusedPidRemoved(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("the system does not tell a process's start time")
	}
	marker := gitops.MarkerOf(os.Getpid())
	i := strings.Index(marker, " start ")
	j := strings.Index(marker, " host ")
	reused := marker[:i] + " start 1" + marker[j:]
	r := leftoverRepo(t, map[string]string{"refs/heads/feature/reused.lock": reused})
	must(t, r.open().CreateBranch("feature/b", r.git("rev-parse", "main")))
	if _, err := os.Stat(filepath.Join(r.dir, ".git", "refs", "heads", "feature", "reused.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a lock of a pid reused by another process was kept: %v", err)
	}
}

// A merge holds its checkout's index.lock from before it checks the
// checkout until the checkout is updated — across the move of main, whose
// clearing of killed writes must not take it for a killed baton's — and
// releases it after.
func TestMergeHoldsIndexLock(t *testing.T) {
	r := featureRepo(t)
	lock := filepath.Join(r.dir, ".git", "index.lock")
	held := false
	restore := gitops.SetAfterStep(func(step string) {
		if step == "ref written" {
			b, err := os.ReadFile(lock)
			held = err == nil && string(b) == gitops.MarkerOf(os.Getpid())
		}
	})
	_, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "Merge feature/a", Signature: sig()})
	restore()
	must(t, err)
	if !held {
		t.Error("index.lock was not held by this process when main moved")
	}
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("index.lock left after the merge: %v", err)
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Errorf("not clean after the merge:\n%s", st)
	}
}

// A lock naming this host but another process-id namespace (a container
// sharing the repository) is kept even when no process of its id runs
// here: ids there are not ids here.
func TestLockOfOtherNamespaceKept(t *testing.T) {
	if _, err := os.Readlink("/proc/self/ns/pid"); err != nil {
		t.Skip("the system does not tell a process's namespace")
	}
	ended := exec.Command("true")
	must(t, ended.Run())
	gone := gitops.MarkerOf(ended.Process.Pid) // this namespace: removed
	i := strings.LastIndex(gone, "/pid:[")
	elsewhere := gone[:i] + "/pid:[1]\n"
	r := leftoverRepo(t, map[string]string{"refs/heads/feature/gone.lock": gone, "refs/heads/feature/ns.lock": elsewhere})
	must(t, r.open().CreateBranch("feature/b", r.git("rev-parse", "main")))
	if _, err := os.Stat(filepath.Join(r.dir, ".git", "refs", "heads", "feature", "gone.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock of an ended process was kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.dir, ".git", "refs", "heads", "feature", "ns.lock")); err != nil {
		t.Errorf("the lock of another namespace's process was removed: %v", err)
	}
}
