package gitops_test

import (
	"fmt"
	"testing"
)

// sameTime commits with the time of the last commit, as scripts that fix
// GIT_COMMITTER_DATE do: the walks cannot rely on time order.
func (r *gitRepo) sameTime(file, msg string) string {
	r.t.Helper()
	tick := r.tick
	h := r.commit(file, msg)
	r.tick = tick
	return h
}

func TestWalksMatchGitWithEqualCommitTimes(t *testing.T) {
	t.Run("branch ahead of main", func(t *testing.T) {
		r := newGitRepo(t)
		r.sameTime("a.txt", "base")
		r.git("checkout", "-q", "-b", "feature/a")
		r.sameTime("f.txt", "f1")
		r.sameTime("f.txt", "f2")
		r.git("checkout", "-q", "main")
		r.git("merge", "-q", "--no-ff", "-m", "merge", "feature/a")
		g := r.open()
		for i := 0; i < 10; i++ { // the heap's order among equal times varies
			checkMergeBase(t, r, g, "feature/a", "main")
			checkMergeBase(t, r, g, "main", "feature/a")
			checkMergeBase(t, r, g, "main~1", "feature/a")
			checkRange(t, r, g, "main~1", "main")
			checkRange(t, r, g, "feature/a~1", "main")
			checkAncestry(t, r, g, "feature/a", "main")
		}
	})
	t.Run("diverged", func(t *testing.T) {
		r := newGitRepo(t)
		r.sameTime("a.txt", "root")
		r.sameTime("a.txt", "base")
		r.git("checkout", "-q", "-b", "feature/b")
		for i := 0; i < 3; i++ {
			r.sameTime("f.txt", fmt.Sprintf("f%d", i))
		}
		r.git("checkout", "-q", "main")
		r.sameTime("m.txt", "m1")
		g := r.open()
		for i := 0; i < 10; i++ {
			checkMergeBase(t, r, g, "main", "feature/b")
			checkMergeBase(t, r, g, "feature/b", "main")
			checkRange(t, r, g, "main", "feature/b")
			checkRange(t, r, g, "feature/b", "main")
		}
	})
}
