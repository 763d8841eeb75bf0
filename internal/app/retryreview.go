package app

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/workflow"
)

// A REVIEW session that recorded its review and then ended in ERROR (its
// merge failed, say) is retried; the retry, following the same prompt,
// records the same review again. That second record would count twice
// toward the item's history and its decisions, so it is recognised: a
// review by a retry of the item's REVIEW that repeats the item's last
// review (same verdict, same head, same issues), with only ERROR sessions
// of the item since and no fix answering it, is not recorded again, and
// the last review's decision stands once more.

// repeatedReview returns the review in repeats, if any.
func (st *state) repeatedReview(r *reviews.File, p *progress.File, in reviews.NewReview) (gjson.Result, bool) {
	who, _ := st.resolveActor()
	if p == nil || who == nil || who.Session == nil || canonicalRole(who.Role) != workflow.Review || in.AgentType != workflow.Review || in.FeatureID == nil {
		return gjson.Result{}, false
	}
	var last gjson.Result
	for _, rv := range r.Reviews() {
		if rv.Get("agent_type").String() == in.AgentType && rv.Get("feature_id").String() == *in.FeatureID && rv.Get("branch").String() == Deref(in.Branch) {
			last = rv
		}
	}
	head := ""
	if in.CommitRange != nil {
		head = Deref(in.CommitRange.To)
	}
	if !last.Exists() || last.Get("verdict").String() != in.Verdict || last.Get("commit_range.to").String() != head {
		return gjson.Result{}, false
	}
	id := int(last.Get("review_id").Int())
	for _, x := range r.Fixes() {
		if int(x.Get("review_id").Int()) == id {
			return gjson.Result{}, false
		}
	}
	grouped, err := reviews.AssignIDs(in.Issues, reviews.IssuePrefix(in.AgentType, id))
	if err != nil || !slices.Equal(issueKeys(gjson.ParseBytes(grouped)), issueKeys(last.Get("issues"))) {
		return gjson.Result{}, false
	}
	return last, st.erroredSince(*in.FeatureID, id)
}

// issueKeys lists a grouped issue list's severities and descriptions.
func issueKeys(issues gjson.Result) []string {
	var out []string
	for _, sev := range reviews.Severities {
		for _, is := range issues.Get(sev).Array() {
			out = append(out, sev+":"+strings.Join(strings.Fields(is.Get("description").String()), " "))
		}
	}
	return out
}

// erroredSince says whether item x has had sessions ended since review
// id was recorded (in the log's order), and all of them in ERROR.
func (st *state) erroredSince(x string, id int) bool {
	events, err := st.tx.Store().ReadEvents()
	if err != nil {
		return false
	}
	seen, n, errored := false, 0, true
	eachRecord(events, func(rec gjson.Result) {
		seen = seen || int(rec.Get("review_id").Int()) == id
	}, func(rec gjson.Result) {
		if !seen {
			return
		}
		var ids []string
		for _, f := range rec.Get("features_touched").Array() {
			ids = append(ids, f.String())
		}
		if strings.Join(ids, ",") == x {
			n++
			errored = errored && rec.Get("outcome").String() == "ERROR"
		}
	})
	return n > 0 && errored
}

// keepRepeated lets the last review's decision stand again for a review
// that repeats it, and returns that review.
func (st *state) keepRepeated(p *progress.File, in reviews.NewReview, last gjson.Result) (reviews.Review, error) {
	var rv reviews.Review
	if err := json.Unmarshal([]byte(last.Raw), &rv); err != nil {
		return rv, err
	}
	var d workflow.Decision
	if err := json.Unmarshal(rv.Decision, &d); err != nil {
		return rv, err
	}
	if err := st.applyReview(p, in, rv.ReviewID, d, features.SplitIDs(*in.FeatureID)); err != nil {
		return rv, err
	}
	st.app.warn("this review repeats R%d, which a session of this item recorded before it ended in ERROR: R%d is not recorded again, and its decision stands (%s)", rv.ReviewID, rv.ReviewID, d.Reason)
	return rv, nil
}
