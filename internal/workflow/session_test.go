package workflow

import "testing"

func TestMayAct(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a      Actor
		action Action
		want   string
	}{
		{"unbound", Actor{}, AddReview, "refused: no session is bound to this call, so it may not add a review"},
		{"the matrix allows", Actor{Role: Review, Session: 4, InSession: true}, Merge, "ok"},
		{"the matrix refuses", Actor{Role: Implement, Session: 4, InSession: true}, Merge, "refused: IMPLEMENT may not merge to main: only REVIEW may"},
		{"an alias has its role's rights", Actor{Role: "GLOBAL_FIX", Session: 4, InSession: true}, AddFix, "ok"},
		{"a person", Actor{Role: Human}, Merge, "ok"},
	} {
		check(t, tc.name, MayAct(tc.a, tc.action), tc.want)
	}
	check(t, "own role", RecordsOwnRole(Actor{Role: "BUGFIX", Session: 2}, "IMPLEMENT"), "ok")
	check(t, "another role", RecordsOwnRole(Actor{Role: Implement, Session: 2}, "REVIEW"), "refused: IMPLEMENT may not record REVIEW work (-a REVIEW)")
	check(t, "a person records anyone's", RecordsOwnRole(Actor{Role: Human}, "REVIEW"), "ok")
	check(t, "a session's --as", ActsOnlyAsSession(3, Review), "refused: this call is bound to session 3 (REVIEW) and acts only as it")
	check(t, "no run", PersonWhileLaunching(false), "ok")
	check(t, "a run drives the project", PersonWhileLaunching(true), "refused: a launcher (baton run) is driving this project")
	check(t, "a launcher outside a session", Launches(false), "ok")
	check(t, "a launcher inside a session", Launches(true), "refused: this call is bound to an agent session")
}

func TestOpeningSessions(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Opening
		want string
	}{
		{"the launcher", Opening{Opener: LauncherOpens, Role: Implement}, "ok"},
		{"a person with the key", Opening{Opener: KeyholderOpens, Role: Implement}, "ok"},
		{"a session opens another", Opening{Session: 2, SessionRole: Implement, Role: Review}, "refused: session 2 (IMPLEMENT) may not open sessions"},
		{"a person while a run drives", Opening{Opener: KeyholderOpens, LauncherRunning: true}, "refused: a launcher (baton run) is driving this project and opens every session itself"},
		{"an override while a run drives", Opening{Opener: OverrideOpens, LauncherRunning: true}, "refused: a launcher (baton run) is driving this project, and an agent works only in the session its launcher gave it"},
	} {
		check(t, tc.name, MayOpen(tc.o), tc.want)
	}
}

func TestMayEnd(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a     Actor
		given int
		id    int
		want  string
	}{
		{"its own", Actor{Role: Implement, Session: 4, InSession: true}, 0, 4, "ok"},
		{"its own, named", Actor{Role: Implement, Session: 4, InSession: true}, 4, 4, "ok"},
		{"another", Actor{Role: Implement, Session: 4, InSession: true}, 3, 0, "refused: session 4 (IMPLEMENT) may not end session 3"},
		{"unbound", Actor{}, 3, 0, "refused: no session is bound to this call, so it may not end a session"},
		{"a launcher names it", Actor{Role: Human}, 3, 3, "ok"},
		{"a launcher names none", Actor{Role: Human}, 0, 0, "ok"},
	} {
		id, err := MayEnd(tc.a, tc.given)
		check(t, tc.name, err, tc.want)
		if id != tc.id {
			t.Errorf("%s: session %d, want %d", tc.name, id, tc.id)
		}
	}
	agent := Actor{Role: Implement, Session: 4, InSession: true}
	check(t, "the features given", WithinSession(agent, []string{"F001", "F002"}, []string{"F002"}), "ok")
	check(t, "another feature", WithinSession(agent, []string{"F001"}, []string{"F001", "F003"}), "refused: session 4 works on F001, not F003")
	check(t, "a session given none", WithinSession(agent, nil, []string{"F003"}), "ok")
	check(t, "a launcher records any", WithinSession(Actor{Role: Human, Session: 4}, []string{"F001"}, []string{"F003"}), "ok")
}

func TestReadyForReview(t *testing.T) {
	base := Handover{Session: 5, Role: Implement, Outcome: "READY_FOR_REVIEW", Repo: true, Main: "main", Branch: "feature/a", Commits: 2}
	for _, tc := range []struct {
		name string
		edit func(h *Handover)
		want string
	}{
		{"work committed on its branch", func(h *Handover) {}, "ok"},
		{"on main", func(h *Handover) { h.Branch = "main" }, "refused: session 5 (IMPLEMENT) may end READY_FOR_REVIEW only with its work committed on a branch of its own, not on main"},
		{"on no branch", func(h *Handover) { h.Branch = "" }, "refused: not on main"},
		{"no commits", func(h *Handover) { h.Commits = 0 }, "refused: session 5 (IMPLEMENT) has no commits on feature/a since it began"},
		{"a person's record", func(h *Handover) { h.Commits, h.Person = 0, true }, "ok"},
		{"outside a repository", func(h *Handover) { h.Commits, h.Repo = 0, false }, "ok"},
		{"another outcome", func(h *Handover) { h.Commits, h.Outcome = 0, "ERROR" }, "ok"},
		{"a review session", func(h *Handover) { h.Commits, h.Role = 0, Review }, "ok"},
		{"a bug fix has IMPLEMENT's duty", func(h *Handover) { h.Commits, h.Role = 0, "BUGFIX" }, "refused: session 5 (BUGFIX) has no commits"},
		{"a fix answering its review", func(h *Handover) { h.Role, h.Review, h.Answered = Fix, 3, true }, "ok"},
		{"a fix answering nothing", func(h *Handover) { h.Role, h.Review = Fix, 3 }, "refused: session 5 (FIX) recorded no fix answering review R3 of feature/a"},
		{"a fix with no review asking", func(h *Handover) { h.Role = "GLOBAL_FIX" }, "ok"},
	} {
		h := base
		tc.edit(&h)
		check(t, tc.name, ReadyForReview(h), tc.want)
	}
	all := []ReviewRef{{ID: 1, Branch: "feature/a"}, {ID: 2, Architecture: true, DecisionBranch: "refactor/arch-review-2"}, {ID: 3, Branch: "feature/a"}}
	if id := AskedForFix(all, "feature/a"); id != 3 {
		t.Errorf("AskedForFix(feature/a) = %d, want 3", id)
	}
	if id := AskedForFix(all, "refactor/arch-review-2"); id != 2 {
		t.Errorf("AskedForFix(refactor) = %d, want 2", id)
	}
}

func TestConfineRange(t *testing.T) {
	base := SessionRange{Session: 6, To: "2222222bbbb", OnWork: true, End: "3333333cccc", Where: "its branch feature/a", From: "1111111aaaa", Base: "1111111aaaa"}
	for _, tc := range []struct {
		name string
		edit func(r *SessionRange)
		to   string
		want string
	}{
		{"on its branch", func(r *SessionRange) {}, "2222222bbbb", "ok"},
		{"an end given elsewhere", func(r *SessionRange) { r.OnWork, r.ToGiven = false, true }, "", "refused: --commit-to 2222222 is not on its branch feature/a (at 3333333): session 6 records only the commits of its own work"},
		{"the default end elsewhere", func(r *SessionRange) { r.OnWork = false }, "3333333cccc", "ok"},
		{"a start after the base", func(r *SessionRange) { r.From, r.FromAfterBase = "4444444dddd", true }, "2222222bbbb", "ok"},
		{"a start before the base", func(r *SessionRange) { r.From = "4444444dddd" }, "", "refused: --commit-from 4444444 is not at or after session 6's base commit 1111111"},
		{"no base recorded", func(r *SessionRange) { r.From, r.Base = "4444444dddd", "" }, "2222222bbbb", "ok"},
	} {
		r := base
		tc.edit(&r)
		to, err := ConfineRange(r)
		check(t, tc.name, err, tc.want)
		if to != tc.to {
			t.Errorf("%s: end %q, want %q", tc.name, to, tc.to)
		}
	}
}

func TestMayAppend(t *testing.T) {
	init, review := Actor{Role: "BROWNFIELD_INITIALIZER", Session: 1, InSession: true}, Actor{Role: Review, Session: 4, InSession: true}
	feature, debt := Entry{ID: "F001", Type: "feature"}, Entry{ID: "DEBT-001", Type: "tech_debt"}
	for _, tc := range []struct {
		name    string
		a       Actor
		entries []Entry
		want    string
	}{
		{"the initializer adds features", init, []Entry{feature, debt}, "ok"},
		{"a reviewer records debt", review, []Entry{debt}, "ok"},
		{"a reviewer adds a feature", review, []Entry{debt, feature}, "refused: REVIEW may not add features to the feature list: only INITIALIZER may (--entries: entry 1, F001, has type \"feature\")"},
		{"an entry with no id", review, []Entry{{Type: "bug"}}, "refused: (--entries: entry 0, -, has type \"bug\")"},
		{"a fixer adds a feature", Actor{Role: Fix, Session: 5, InSession: true}, []Entry{feature}, "refused: FIX may not add features to the feature list: only INITIALIZER may; leave it"},
		{"a fixer records debt", Actor{Role: Fix, Session: 5, InSession: true}, []Entry{debt}, "refused: FIX may not add tech-debt items"},
		{"unbound", Actor{}, []Entry{feature}, "refused: no session is bound to this call"},
		{"listed passing", init, []Entry{feature, {ID: "F002", Type: "feature", Passes: true}}, "refused: --entries: entry 1 (F002) is listed as passing"},
		{"a person lists one passing", Actor{Role: Human}, []Entry{{ID: "F002", Passes: true}}, "ok"},
	} {
		check(t, tc.name, MayAppend(tc.a, tc.entries, "tech_debt"), tc.want)
	}
}

func TestOwnStateFile(t *testing.T) {
	agent := Actor{Role: Review, Session: 2, InSession: true}
	check(t, "the project's own", OwnStateFile(agent, "reviews.json", "reviews.json", "/p/reviews.json", true), "ok")
	check(t, "another copy", OwnStateFile(agent, "/tmp/r.json", "reviews.json", "/p/reviews.json", false), "refused: --file /tmp/r.json: this project's reviews.json is /p/reviews.json")
	check(t, "a person's copy", OwnStateFile(Actor{Role: Human}, "/tmp/r.json", "reviews.json", "/p/reviews.json", false), "ok")
	check(t, "unbound", OwnStateFile(Actor{}, "/tmp/r.json", "reviews.json", "/p/reviews.json", false), "ok")
}
