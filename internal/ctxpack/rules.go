package ctxpack

import "fmt"

// rule is what a role may do, may not do, and how its session ends.
type rule struct{ may, mayNot, finish string }

func rulesFor(in Input) rule {
	b := in.Branch
	switch in.Situation {
	case Initializer, Brownfield:
		return rule{
			may:    "add items to the feature list (baton features append) and read everything",
			mayNot: "implement, review, fix or merge anything",
			finish: `baton session end -o SUCCESS -s "..." once the feature list is complete`,
		}
	case Implement, Bugfix:
		return rule{
			may:    "create the branch " + b + ", commit on it, mark a passing feature failing when you find it broken (baton features fail, with its id and -r, saying what broke)",
			mayNot: "merge to the main branch, mark anything passing, or add reviews and fixes: only REVIEW merges and marks passing",
			finish: fmt.Sprintf(`commit everything on %s, then baton session end -o READY_FOR_REVIEW -s "..." (with the branch checked out); if you cannot finish, baton session end -o ERROR -s "what stopped you"`, b),
		}
	case ReviewFeature, ReviewBug, ReviewRefactor, ReviewDebt:
		return rule{
			may:    "record a review, merge the reviewed branch after a PASS (baton reviews merge), reject the work (baton reviews reject)",
			mayNot: "change the code under review, commit on the branch, or record fixes",
			finish: `record the review; after a PASS run baton reviews merge and end only once it succeeded: baton session end -o SUCCESS|NEEDS_FIX|REJECTED -s "..."`,
		}
	case FixReview, FixArchitecture, GlobalFix:
		return rule{
			may:    "commit fixes on " + b + " (and create it if it is a refactor/ branch that does not exist), record the fix (baton reviews add-fix)",
			mayNot: "merge, mark anything passing, record reviews, or work on issues of another review",
			finish: fmt.Sprintf(`commit on %s, then baton session end -o READY_FOR_REVIEW -s "..."; if you cannot finish, -o ERROR`, b),
		}
	case ArchitectureReview:
		return rule{
			may:    "read the whole code base and record one architecture review (baton reviews add-review -a ARCHITECTURE)",
			mayNot: "change code, fix what you find, merge, or mark features passing",
			finish: `baton session end -o SUCCESS -s "health and findings"`,
		}
	}
	return rule{}
}

func rulesItem(in Input) Item {
	r := rulesFor(in)
	p := fmt.Sprintf("You may: %s.\nYou may not: %s.\nFinish: %s.\nbaton refuses what your role may not do (exit 3) and says who may; do not work around a refusal.\n",
		r.may, r.mayNot, r.finish)
	return Item{ID: "rules", Kind: "global", Source: "baton", Tags: []string{"rules"}, Importance: 0.99,
		Title: "Rules of " + in.Situation.Role(), Payload: p}
}
