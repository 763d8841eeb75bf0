package workflow

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
)

// The rules of recording a review: what it names, and what a PASS must
// rest on (reviewed work, the head handed over, the project's own files).
// The application gathers each situation from the files and git.

// Approving says whether a verdict can let its branch through to main (a
// PASS, or a PASS_WITH_COMMENTS the fix-cycle limit merges).
func Approving(verdict string) bool {
	return verdict == "PASS" || verdict == "PASS_WITH_COMMENTS"
}

// ReviewSubject checks what a new review names: a REVIEW names the branch
// and the features it reviewed (an ARCHITECTURE_REFACTOR review of a
// refactor/ branch names none), an ARCHITECTURE review is of the whole
// codebase and names no feature.
func ReviewSubject(agentType string, features []string, branch string) error {
	switch {
	case agentType == Review && branch == "":
		return errs.New(errs.Usage, "--branch: a REVIEW names the branch it reviewed (an ARCHITECTURE review may omit it)")
	case agentType == Architecture && len(features) > 0:
		return errs.New(errs.Usage, "--feature-id: an ARCHITECTURE review is of the whole codebase and names no feature (features pass on REVIEW's review of their work); leave --feature-id out")
	case agentType == Review && len(features) == 0 && !strings.HasPrefix(branch, "refactor/"):
		return errs.New(errs.Usage, "--feature-id: a REVIEW names the feature it reviewed (only an ARCHITECTURE_REFACTOR review of a refactor/ branch has none)")
	}
	return nil
}

// NewReview is what the files and git say about a review being recorded,
// before its range is taken from git.
type NewReview struct {
	Person    bool // a person (or the launcher) records it
	AgentType string
	Verdict   string
	Features  []string // the features it names
	Branch    string   // the branch it names ("" none)
	Blocking  bool     // a critical or major issue in it
	Repo      string   // the repository's top ("" outside one)
	// BranchExists: the repository has Branch.
	BranchExists bool
	// Work is what the workflow and earlier reviews say is under review
	// on Branch (see ReviewedFeatures).
	Work WorkUnderReview
	// Landed is the earlier review that merged Branch into main, when
	// one did; BranchLanded says the branch holds nothing more (it is
	// gone, or its head is on main).
	Landed       *ReviewRef
	BranchLanded bool
}

// WorkUnderReview is what says which features are under review on a
// branch: the status the workflow set, the features earlier reviews of
// the branch named, and the branch sent to the bound REVIEW session.
type WorkUnderReview struct {
	StatusFeature  *string  // current_feature (nil: null)
	StatusBranch   string   // current_branch ("" none)
	BranchFeatures []string // named by earlier reviews of the branch
	SentBranch     string   // the bound session's sent branch ("" none)
}

// CheckReview applies the rules of a review before its range is recorded,
// in order: a PASS lists no blocking issue, it names only the work under
// review, it is not of work that has landed, and a PASS is of a branch
// that exists.
func CheckReview(r NewReview) error {
	if err := PassIssues(r.Verdict, r.Blocking); err != nil {
		return err
	}
	if err := PassNamesItems(r); err != nil {
		return err
	}
	if err := ReviewedFeatures(r); err != nil {
		return err
	}
	if err := LandedWork(r); err != nil {
		return err
	}
	return PassedBranch(r)
}

// PassNamesItems refuses a REVIEW's PASS that names no item while the
// work the workflow sent to REVIEW on its branch is items (features, bugs,
// a tech-debt batch on its refactor/ branch): a PASS passes exactly the
// items it names, so one naming none would merge the branch and leave
// its items pending. A person is not held to it.
func PassNamesItems(r NewReview) error {
	w := r.Work
	if !Approving(r.Verdict) || r.AgentType != Review || r.Person || len(r.Features) > 0 || w.StatusFeature == nil || r.Branch == "" {
		return nil
	}
	ids := strings.Join(features.SplitIDs(*w.StatusFeature), ",")
	if ids == "" || (w.StatusBranch != "" && w.StatusBranch != r.Branch) {
		return nil
	}
	return errs.New(errs.Usage, "--feature-id: the work under review on %s is %s, and a PASS names the items it passes. Record the review with --feature-id %s, then pass those items (features pass-batch %s)", r.Branch, ids, ids, ids)
}

// PassIssues refuses a PASS that lists a critical or major issue: that is
// REQUEST_CHANGES (or, at the fix-cycle limit, the limit's decision).
func PassIssues(verdict string, blocking bool) error {
	if verdict != "PASS" || !blocking {
		return nil
	}
	return errs.New(errs.Policy, "--verdict PASS with a critical or major issue in --issues: a blocking issue means the work is not ready. Record the verdict REQUEST_CHANGES with those issues (at the fix-cycle limit baton then decides), or leave out an issue that is not blocking")
}

// ReviewedFeatures refuses a feature review naming features that are not
// the work under review on its branch: the features the workflow sent to
// REVIEW on that branch, else those earlier reviews of the branch named,
// else (a branch no one sent or reviewed, such as one REVIEW made itself,
// in a session sent a branch) the features the workflow sent to REVIEW.
// An architecture refactor names no feature. A person is not held to it.
func ReviewedFeatures(r NewReview) error {
	if len(r.Features) == 0 || r.Branch == "" || r.AgentType != Review || r.Person {
		return nil
	}
	w := r.Work
	if w.StatusFeature == nil && w.StatusBranch == r.Branch && strings.HasPrefix(r.Branch, "refactor/") {
		return errs.New(errs.Policy, "--feature-id: the work under review on %s is an architecture refactor, which names no feature: features pass on the review of their own work. Review %s without --feature-id", r.Branch, r.Branch)
	}
	var sent []string // the features the workflow sent to REVIEW, on any branch
	if w.StatusFeature != nil {
		sent = features.SplitIDs(*w.StatusFeature)
	}
	var want []string
	switch {
	case len(sent) > 0 && w.StatusBranch == r.Branch:
		want = sent
	case len(w.BranchFeatures) > 0:
		want = w.BranchFeatures
	case w.SentBranch != "" && r.BranchExists:
		want = sent
	}
	if len(want) == 0 {
		return nil
	}
	var extra []string
	for _, id := range r.Features {
		if !slices.Contains(want, id) {
			extra = append(extra, id)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	known := slices.Clone(want)
	sort.Strings(known)
	known = slices.Compact(known)
	return errs.New(errs.Policy, "--feature-id: %s is not part of the work under review on %s, which is %s: a review names only the features of the work it reviewed. Review %s with --feature-id %s",
		strings.Join(extra, ", "), r.Branch, strings.Join(known, ","), r.Branch, strings.Join(known, ","))
}

// LandedWork refuses a review of work that has landed: once a review's
// merge has put a branch on main, and the branch holds nothing more, a
// later review of it (whatever its verdict) would reopen work that is
// done. Its features stay passing; a regression is a feature marked
// failing, which sends it back to the queue.
func LandedWork(r NewReview) error {
	if r.Landed == nil || !r.BranchLanded || r.Branch == "" || r.AgentType == Architecture {
		return nil
	}
	return errs.New(errs.Policy, "--branch %s: review R%d merged it into main as %s, so its work has landed and a review of it changes nothing; the features it passed stay passing. Review the work sent to you now, or end your session with the outcome that fits, saying why in its summary",
		r.Branch, r.Landed.ID, short(r.Landed.MergeCommit))
}

// PassedBranch refuses, in a repository, a PASS of a branch that does not
// exist: there is no work on it to pass (and nothing to merge).
func PassedBranch(r NewReview) error {
	if r.Repo == "" || r.Branch == "" || r.AgentType != Review || r.Verdict != "PASS" || r.BranchExists {
		return nil
	}
	return errs.New(errs.Policy, "--verdict PASS: branch %s does not exist in the repository at %s, so there is no work on it to pass. Review the branch the work was committed on (see 'git branch --list')", r.Branch, r.Repo)
}

// ReviewedHead is what git says about a review's recorded range, and what
// was sent to the bound REVIEW session.
type ReviewedHead struct {
	Person       bool
	Architecture bool
	Verdict      string
	Branch       string // the branch reviewed ("" none)
	From, To     string // the recorded range ("" unknown)
	// SentBranch and SentHead are the work sent to the bound REVIEW
	// session ("" when none was, or no session is bound).
	SentBranch, SentHead string
	// SentWithin: the recorded head holds SentHead (asked when Branch is
	// not SentBranch); WithinSent: SentHead holds the recorded head.
	SentWithin, WithinSent bool
	// Main is the branch work is merged into ("" outside a repository);
	// OnMain: the recorded head is on it.
	Main   string
	OnMain bool
	// StateFiles are copies of baton's state files the range adds or
	// changes; PredecessorTracked: the predecessor's state was tracked
	// by git when baton took the project over.
	StateFiles         []string
	PredecessorTracked bool
}

// CheckReviewedHead applies the rules of a review's recorded head: a
// review in a session sent work is of that work at the head handed over,
// and an agent's approving review rests on work (not main, not commits
// already on main, no copies of the state files).
func CheckReviewedHead(h ReviewedHead) (warning string, err error) {
	if err := SentHead(h); err != nil {
		return "", err
	}
	return PassWork(h)
}

// SentHead refuses a REVIEW session's review of its branch at a head past
// the one sent to it: commits made during the review (the reviewer's own)
// are not the work under review, and a PASS would merge them unreviewed.
func SentHead(h ReviewedHead) error {
	if h.Branch == "" || h.To == "" || h.SentHead == "" || h.To == h.SentHead {
		return nil
	}
	if h.SentBranch != h.Branch { // another branch: refused when it is the sent work and more
		if !h.SentWithin {
			return nil
		}
		return errs.New(errs.Policy, "%s holds the work sent to this review (%s at %s) and commits made after it: commits made during a review are not the work under review. Review %s at %s, and record what needs changing as issues (REQUEST_CHANGES) for FIX",
			h.Branch, h.SentBranch, short(h.SentHead), h.SentBranch, short(h.SentHead))
	}
	if h.WithinSent {
		return nil
	}
	return errs.New(errs.Policy, "%s is at %s, but the work sent to this review was %s at %s: commits made during a review are not the work under review. Put %s back at %s and record what needs changing as issues (REQUEST_CHANGES) for FIX",
		h.SentBranch, short(h.To), h.SentBranch, short(h.SentHead), h.SentBranch, short(h.SentHead))
}

// Concerns says whether PassWork looks at the review at all: an agent's
// approving review of a branch at a recorded head. Only then are its git
// facts (Main, OnMain, StateFiles) needed.
func (h ReviewedHead) Concerns() bool {
	return !h.Person && Approving(h.Verdict) && h.Branch != "" && h.To != ""
}

// PassWork refuses an agent's approving review that names no work handed
// over for review: main itself (an architecture review excepted), a branch
// with no commit that is not on main (its features would pass with no
// work), a branch carrying copies of the state files, or, in a REVIEW
// session sent a branch, anything but that branch at the head it was sent
// at. A person records what they decide.
func PassWork(h ReviewedHead) (warning string, err error) {
	if !h.Concerns() || h.Main == "" {
		return "", nil
	}
	if h.Branch == h.Main {
		if h.Architecture {
			return "", nil // an architecture review is of main, and names no feature
		}
		return "", errs.New(errs.Policy, "--verdict %s: %s is the branch reviewed work is merged into, not work under review, and passing it would mark features passing with no work. Review the branch the work was committed on, or record REQUEST_CHANGES or REJECT when there is none",
			h.Verdict, h.Main)
	}
	if h.OnMain {
		return "", errs.New(errs.Policy, "--verdict %s: %s (at %s) has no commit that is not on %s, so there is no work on it to pass. Review the branch the work was committed on, or record REQUEST_CHANGES or REJECT when there is none",
			h.Verdict, h.Branch, short(h.To), h.Main)
	}
	if h.From != "" {
		if warning, err = StateFilesOnBranch(h.Branch, h.StateFiles, h.PredecessorTracked); err != nil {
			return "", err
		}
	}
	if h.SentHead == "" || (h.SentBranch == h.Branch && h.SentHead == h.To) {
		return warning, nil
	}
	return "", errs.New(errs.Policy, "--verdict %s: the work sent to this review is %s at %s, not %s at %s: a review passes the work handed over to it, not a branch or commits made during the review. Review %s at %s, and record what needs changing as issues (REQUEST_CHANGES) for FIX",
		h.Verdict, h.SentBranch, short(h.SentHead), h.Branch, short(h.To), h.SentBranch, short(h.SentHead))
}

// StateFilesOnBranch refuses to pass or merge a branch that carries copies
// of baton's state files: merged, they would put stale state on main, and
// every checkout would rewind it. Where baton took over a predecessor
// whose state git tracked, the branches of that time carry them: they are
// let through with a warning.
func StateFilesOnBranch(branch string, files []string, predecessorTracked bool) (warning string, err error) {
	if len(files) == 0 {
		return "", nil
	}
	if len(files) > 5 {
		files = append(files[:5:5], "…")
	}
	if predecessorTracked {
		return fmt.Sprintf("%s commits copies of the state files (%s), as the predecessor did (baton init found them tracked by git): merged, they reach main; take them off main and every branch with 'git rm --cached' and a commit", branch, strings.Join(files, ", ")), nil
	}
	return "", errs.New(errs.Policy, "%s commits copies of baton's state files (%s), which stay out of git: merged, they would put stale state on main, and every checkout would rewind it. Ask for them to be taken off the branch (REQUEST_CHANGES: 'git rm --cached' them and commit), then review again",
		branch, strings.Join(files, ", "))
}

// short is a commit's short form, as git prints it.
func short(hash string) string {
	if len(hash) > 7 {
		return hash[:7]
	}
	return hash
}
