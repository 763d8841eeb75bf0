package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// pageSize is the unit a tmpfs counts its free space in.
const pageSize = 4096

// TestGitCommandsOnFullDisk runs each command that moves git — reviews
// merge, reviews reject, branch create — on a project whose file system
// (a small tmpfs holding the repository and the state) is full, at every
// level of free space from none until the command has room (see
// nextLevel). Whatever it cannot write, the command fails as the I/O error
// it is: exit 1, naming the full disk; never a conflict (exit 5, "moved
// meanwhile") and never a repair to make by hand. Once space is freed the
// next command finds git and the state agreeing (the change is in both or
// in neither, the checkout of main clean), and the command, retried if it
// had not taken effect, succeeds once.
func TestGitCommandsOnFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting a tmpfs to fill needs root (CI runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot mount a tmpfs at %s: %v %s", dir, err, out)
	}
	defer exec.Command("umount", "-l", dir).Run()
	git := gitIn(t, dir)
	git("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "README")
	git("commit", "-q", "-m", "initial commit")
	mustBaton(t, dir, "init", "--name", "disk-full")
	appendFeatures(t, dir, 200, 20)
	filler := filepath.Join(dir, ".git", "test-filler")
	n := 0
	for _, op := range []string{"merge", "reject", "branch"} {
		levels, done := 0, 0
		for free := 0; done < 2; free = nextLevel(free) {
			if free > 400 {
				t.Fatalf("%s never succeeded with up to %d pages free", op, free)
			}
			n++
			if onFullDisk(t, dir, git, filler, op, n, free) {
				done++
			}
			levels++
		}
		t.Logf("%s: %d levels of free space, from none", op, levels)
	}
	mustBaton(t, dir, "verify")
}

// nextLevel is the free space tried after free pages: a page at a time at
// first, where a command's smallest writes fail, then 16 pages at a time
// (a command writes each state file it changes twice, the file and its
// recorded copy, and the files grow as the test goes on).
func nextLevel(free int) int {
	if free < 32 {
		return free + 1
	}
	return free + 16
}

// onFullDisk runs op (the n-th) with free pages left on the file system,
// checks what it did and says whether it succeeded.
func onFullDisk(t *testing.T, dir string, git func(...string) string, filler, op string, n, free int) bool {
	t.Helper()
	feature, branch := featureID(n), fmt.Sprintf("feature/f%03d", n)
	var args []string
	reviewID := 0
	if op == "branch" {
		args = []string{"--as", "HUMAN", "--reason", "e2e IMPLEMENT", "branch", "create", branch}
	} else {
		reviewID = prepareBranch(t, dir, git, n, feature, branch, op)
		args = []string{"reviews", op, "--review", strconv.Itoa(reviewID)}
	}
	mainBefore, headBefore := git("rev-parse", "main"), ""
	if op != "branch" {
		headBefore = git("rev-parse", branch)
	}
	fillLeaving(t, filler, free)
	r := baton(t, dir, args...)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	when := fmt.Sprintf("%s with %d pages free", op, free)
	switch {
	case r.code != 0 && r.code != 1:
		t.Fatalf("%s: exit %d, want 0 or 1 (an I/O error)\n%v", when, r.code, r)
	case r.code == 1 && !strings.Contains(r.stderr, "no space left on device"):
		t.Fatalf("%s: exit 1 without naming the full disk\n%v", when, r)
	case strings.Contains(r.stderr, "moved meanwhile") || strings.Contains(r.stderr, "reset --hard"):
		t.Fatalf("%s: a full disk reported as a conflict, or with a repair to make\n%v", when, r)
	}
	mustBaton(t, dir, "progress", "get-status") // the next command settles what this one left
	if op == "branch" {
		created := branchCreated(t, dir, git, branch)
		if !created {
			mustBaton(t, dir, args...) // the retry succeeds
		}
		if !branchCreated(t, dir, git, branch) {
			t.Fatalf("%s: the retried branch create did not take effect", when)
		}
		return r.code == 0
	}
	if !checkGitAgrees(t, dir, git, n, op, reviewID, branch, mainBefore, headBefore) {
		mustBaton(t, dir, args...) // the retry succeeds, once
		if !checkGitAgrees(t, dir, git, n, op, reviewID, branch, mainBefore, headBefore) {
			t.Fatalf("%s: the retried %s did not take effect", when, op)
		}
	}
	return r.code == 0
}

// branchCreated says whether branch exists, checking that the audit log
// records its creation exactly when it does.
func branchCreated(t *testing.T, dir string, git func(...string) string, branch string) bool {
	t.Helper()
	exists := exec.Command("git", "-C", dir, "rev-parse", "--verify", "-q", "refs/heads/"+branch).Run() == nil
	log, _ := os.ReadFile(filepath.Join(dir, ".baton", "events.jsonl"))
	logged := strings.Contains(string(log), "created branch "+branch+" ")
	if exists != logged {
		t.Fatalf("branch %s exists: %v, its creation is in the log: %v", branch, exists, logged)
	}
	if refs := git("for-each-ref", "--format=%(refname)"); strings.Contains(refs, "warning:") {
		t.Fatalf("git finds a broken ref after creating %s:\n%s", branch, refs)
	}
	return exists
}

// fillLeaving fills the file system path is on, then frees the last free
// pages of the file at path.
func fillLeaving(t *testing.T, path string, free int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatalf("filling the disk: %v", err)
	}
	defer f.Close()
	size := int64(0)
	for _, chunk := range []int{64 * pageSize, pageSize} {
		buf := make([]byte, chunk)
		for {
			n, err := f.Write(buf)
			size += int64(n)
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				t.Fatalf("filling the disk: %v", err)
			}
		}
	}
	if err := f.Truncate(max(0, size-int64(free*pageSize))); err != nil {
		t.Fatal(err)
	}
}
