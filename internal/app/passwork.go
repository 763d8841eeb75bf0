package app

import (
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// checkReviewedHead applies the rules of a review's recorded head
// (workflow.CheckReviewedHead): a review in a session sent work is of that
// work at the head handed over, and an agent's approving review rests on
// work. Run after reviewRange, which records the branch's head from git.
func (st *state) checkReviewedHead(in reviews.NewReview) error {
	h := workflow.ReviewedHead{Architecture: in.AgentType == workflow.Architecture, Verdict: in.Verdict, Branch: Deref(in.Branch)}
	if in.CommitRange != nil {
		h.From, h.To = Deref(in.CommitRange.From), Deref(in.CommitRange.To)
	}
	h.Person = st.actorOf().Person()
	r := st.app.repo()
	if r == nil || h.Branch == "" || h.To == "" {
		return nil
	}
	s, err := st.boundOpen()
	if err != nil {
		return err
	}
	if s != nil {
		h.SentBranch, h.SentHead = s.SentBranch, s.SentHead
	}
	if h.SentHead != "" && h.To != h.SentHead {
		h.SentWithin, _ = r.IsAncestor(h.SentHead, h.To)
		h.WithinSent, _ = r.IsAncestor(h.To, h.SentHead)
	}
	if h.Concerns() {
		if err := st.passFacts(r, &h); err != nil {
			return err
		}
	}
	warning, err := workflow.CheckReviewedHead(h)
	if warning != "" {
		st.app.warn("%s", warning)
	}
	return st.decide(err)
}

// passFacts reads from git what a PASS must rest on: main, whether the
// head is on it already, and the state files the range carries.
func (st *state) passFacts(r gitops.Repo, h *workflow.ReviewedHead) error {
	main, mainHead, err := mainOf(r, st.cfg)
	if err != nil {
		return err
	}
	h.Main = main
	if h.Branch == main {
		return nil
	}
	if h.OnMain, err = r.IsAncestor(h.To, mainHead); err != nil {
		return gitErr(err, "checking %s against %s", h.Branch, main)
	}
	if h.From != "" {
		h.StateFiles = st.stateFilesIn(r, h.From, h.To)
		h.PredecessorTracked = len(h.StateFiles) > 0 && predecessorTracked(st.tx.Store())
	}
	return nil
}

// checkLatest refuses to carry out review rv when a later review of the
// same work decided otherwise (workflow.LatestDecides).
func (st *state) checkLatest(rv gjson.Result) error {
	r, err := st.reviews()
	if err != nil {
		return err
	}
	ref := reviewRef(rv)
	later := func(x gjson.Result) bool { return x.Get("review_id").Int() > int64(ref.ID) }
	if later, ok := workflow.LaterReview(reviewRefsWhere(r, later), ref); ok {
		return st.decide(workflow.LatestDecides(ref, &later))
	}
	return nil
}

// checkOwnFile refuses a session's write through --file naming another
// file than the project's own (workflow.OwnStateFile).
func (st *state) checkOwnFile(name string) error {
	if name == "" || st.app.g.File == "" {
		return nil
	}
	s := st.tx.Store()
	given, own := s.Path(name), filepath.Join(s.Dir, name)
	if samePath(given, own) {
		return nil
	}
	who, err := st.resolveActor()
	if err != nil {
		return err
	}
	return st.decide(workflow.OwnStateFile(ruleActor(who), st.app.g.File, name, own, false))
}

// samePath says whether two paths name the same file (links resolved).
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// stateFilesIn lists baton's state files (the three files and .baton/, at
// the state directory's place in the repository) that the commits from
// base to head add or change: a branch that carries copies of them would
// put them on main, where every checkout rewinds the state.
func (st *state) stateFilesIn(r gitops.Repo, base, head string) []string {
	rel, err := filepath.Rel(r.Top(), st.tx.Store().Dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil // the state lives outside the repository
	}
	prefix := ""
	if rel != "." {
		prefix = filepath.ToSlash(rel) + "/"
	}
	changes, err := r.Changes(base, head)
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range changes {
		name, ok := strings.CutPrefix(c.Path, prefix)
		if !ok || c.Deleted {
			continue
		}
		if name == progress.FileName || name == reviews.FileName || name == features.FileName || strings.HasPrefix(name, ".baton/") {
			out = append(out, c.Path)
		}
	}
	return out
}

// checkNoStateFiles refuses to merge a branch that carries copies of
// baton's state files (workflow.StateFilesOnBranch).
func (st *state) checkNoStateFiles(r gitops.Repo, branch, base, head string) error {
	if base == "" {
		return nil
	}
	files := st.stateFilesIn(r, base, head)
	warning, err := workflow.StateFilesOnBranch(branch, files, len(files) > 0 && predecessorTracked(st.tx.Store()))
	if warning != "" {
		st.app.warn("%s", warning)
	}
	return st.decide(err)
}

// predecessorTracked says whether baton init adopted a predecessor's state
// that git tracked (its "tracked" anomaly, in an entry of a person's, not
// of an agent's session): branches of that time carry copies of the
// files, and their work is reviewed and merged as it is.
func predecessorTracked(s *store.Store) bool {
	events, err := s.ReadEvents()
	if err != nil {
		return false
	}
	for _, e := range events {
		if e.Type != "task" || !strings.Contains(string(e.Payload), `"migrated"`) || (e.Auth != "" && !strings.HasPrefix(e.Auth, "person:")) {
			continue
		}
		tracked := false
		gjson.GetBytes(e.Payload, "record.migrated.anomalies").ForEach(func(_, a gjson.Result) bool {
			tracked = tracked || a.Get("kind").String() == "tracked"
			return !tracked
		})
		if tracked {
			return true
		}
	}
	return false
}
