package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/workflow"
)

// This file holds what makes the predecessor's prompts run unchanged where
// its flow was coarser than baton's.

// debtFixForReview records a GLOBAL_FIX session's SUCCESS as
// READY_FOR_REVIEW (workflow.RecordedOutcome): the session's end hands its
// work to REVIEW (and a session without commits on its branch is refused
// there).
func (st *state) debtFixForReview(who *actor, s *progress.Session) {
	var note string
	if s.Outcome, note = workflow.RecordedOutcome(ruleActor(who), s.Outcome); note != "" {
		st.app.warn("%s", note)
	}
}

// mayAppend checks who may append these entries (workflow.MayAppend):
// INITIALIZER adds features, bugs and debt; REVIEW and ARCHITECTURE
// record tech debt only; no agent's entry arrives passing.
func (st *state) mayAppend(raws [][]byte) error {
	who, err := st.resolveActor()
	if err != nil {
		return err
	}
	entries := make([]workflow.Entry, len(raws))
	for i, raw := range raws {
		entries[i] = workflow.Entry{ID: gjson.GetBytes(raw, "id").String(), Type: gjson.GetBytes(raw, "type").String(), Passes: gjson.GetBytes(raw, "passes").Type == gjson.True}
	}
	return st.decide(workflow.MayAppend(ruleActor(who), entries, features.TypeTechDebt))
}

// withoutRecordedDebt drops the tech-debt entries the list already records
// (features.SameDebt: the same source review and the same issue id,
// location or description), saying which item records each: a passing
// review's leftovers are recorded by baton at the review, and the
// predecessor's REVIEW prompt appends them again.
func (st *state) withoutRecordedDebt(f *features.File, raws [][]byte) [][]byte {
	var fresh [][]byte
	for i, raw := range raws {
		if id := f.DuplicateDebt(raw); id != "" {
			st.app.warn("--entries: entry %d is already recorded as %s (same review and issue): not appended again", i, id)
			continue
		}
		fresh = append(fresh, raw)
	}
	return fresh
}

// appendLeftovers records a review's remaining issues as tech-debt items,
// each with every field of its issue, naming its review and issue
// (source_review, source_issue), so that
// a reviewer's own append of the same issue is recognised
// (withoutRecordedDebt).
func (st *state) appendLeftovers(feat *features.File, in reviews.NewReview, ids []string, reviewID int, verdict string) error {
	grouped, err := reviews.AssignIDs(in.Issues, reviews.IssuePrefix(in.AgentType, reviewID))
	if err != nil {
		return err
	}
	var entries [][]byte
	for _, sev := range reviews.Severities {
		for _, is := range gjson.GetBytes(grouped, sev).Array() {
			if len(entries) == len(ids) {
				break
			}
			desc := is.Get("description").String()
			entry := map[string]any{}
			// every field the reviewer wrote (suggestion, location, ...) is kept
			if err := json.Unmarshal([]byte(is.Raw), &entry); err != nil {
				return err
			}
			delete(entry, "id")
			for k, v := range map[string]any{
				"id": ids[len(entries)], "name": Truncate(desc, 80), "type": features.TypeTechDebt, "description": desc,
				"source_review": fmt.Sprintf("R%d", reviewID), "source_issue": is.Get("id").String(),
				"severity": strings.TrimSuffix(sev, "s"), "passes": false,
			} {
				entry[k] = v
			}
			b, err := json.Marshal(entry)
			if err != nil {
				return err
			}
			entries = append(entries, b)
		}
	}
	source := fmt.Sprintf("review R%d (fix-cycle limit)", reviewID)
	if verdict == "PASS" {
		source = fmt.Sprintf("review R%d (left by a PASS)", reviewID)
	}
	if _, err := feat.Append(entries, source); err != nil {
		return err
	}
	st.touch(features.FileName)
	return nil
}

// emptyProgress lets 'progress init' run again over a progress.json that
// records no session yet (the one 'baton init' writes before the
// INITIALIZER's prompt runs its own init): it returns the phase to keep.
// One with sessions is a conflict (exit 5), as before.
func (st *state) emptyProgress(path string) (string, error) {
	cur, err := st.progress()
	if err != nil {
		return "", err
	}
	if cur.Len() > 0 {
		return "", errs.New(errs.Conflict, "%s already exists with %d session(s). Use --force to overwrite.", path, cur.Len())
	}
	s, err := cur.Status()
	if err != nil {
		return "", err
	}
	st.app.notice("%s had no session yet: initialized again with the name and count given", path)
	return s.CurrentPhase, nil
}

// emptyReviews lets 'reviews init' succeed over a reviews.json that records
// no review or fix yet, leaving it as it is; one with records is a
// conflict (exit 5), as before.
func (st *state) emptyReviews(path string) error {
	cur, err := st.reviews()
	if err != nil {
		return err
	}
	if n := len(cur.Reviews()) + len(cur.Fixes()); n > 0 {
		return errs.New(errs.Conflict, "%s already exists with %d review(s) and fix(es). Use --force to overwrite.", path, n)
	}
	st.app.notice("%s is already initialized and empty: kept", path)
	return nil
}

// recordSession adds a session record. An agent's first record in its own
// open session (the predecessor's prompts record their work with
// 'progress add-session', never 'session end') is that session's record:
// the open session notes it, so that its end only closes it. The session
// stays open until then, as the prompts go on calling baton after their
// record (REVIEW's update-status).
func (st *state) recordSession(p *progress.File, open *progress.OpenSessions, who *actor, in progress.Session) (progress.Session, error) {
	var sess *progress.OpenSession
	if who != nil && who.Session != nil {
		if s, err := open.Get(*who.Session); err == nil && s.RecordedAs == 0 {
			sess = &s
		}
	}
	var added progress.Session
	var err error
	if id, ok := ownRecordID(p, sess); ok {
		added = progress.Normalized(in)
		added.SessionID = id
		err = p.AddSessionWithID(added)
	} else {
		p.ReserveAfter(open.MaxID())
		added, err = p.AddSession(in)
	}
	if err != nil || sess == nil {
		return added, err
	}
	open.MarkRecorded(sess.SessionID, added.SessionID)
	p.RemoveLane(sess.SessionID) // its work is recorded: the lane is free
	st.touch(progress.OpenFileName)
	return added, nil
}

// ownRecordID is the id the first record of the open session s (nil: none,
// or one that recorded already) takes: its own, reserved when it opened and
// given to its agent by next-session-id — also when later records took the
// ids past it (a person's record, or a session opened after it that
// recorded first), as its end would. Only a record already holding that id
// (which no baton write makes) sends it to the next free one. The file is
// searched only in that rare case, so a write stays flat in history.
func ownRecordID(p *progress.File, s *progress.OpenSession) (int, bool) {
	if s == nil || s.RecordedAs != 0 {
		return 0, false
	}
	if s.SessionID < p.NextSessionID() {
		if _, err := p.SessionRaw(s.SessionID); err == nil {
			return 0, false
		}
	}
	return s.SessionID, true
}

// closeRecorded ends a session whose agent recorded its work with
// 'progress add-session': the session is closed, its record stands as
// written.
func (st *state) closeRecorded(p *progress.File, open *progress.OpenSessions, sess progress.OpenSession) (progress.Session, error) {
	var rec progress.Session
	raw, err := p.SessionRaw(sess.RecordedAs)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return rec, err
	}
	open.Remove(sess.SessionID)
	st.touch(progress.OpenFileName)
	if _, ok := p.LaneOf(sess.SessionID); ok {
		p.RemoveLane(sess.SessionID)
		st.touch(progress.FileName)
	}
	st.summary = fmt.Sprintf("closed session %d (%s): its agent recorded it (%s)", sess.SessionID, sess.AgentType, rec.Outcome)
	st.record = rec
	return rec, nil
}

// decidedAtLimitHere says whether the bound session recorded the latest
// review of a feature and that review was decided at the fix-cycle limit.
// The predecessor's REVIEW prompt asks get-fix-count after recording its
// review, and must still hear that the limit was reached, although the
// count starts again for the work that follows a REJECT (which everyone
// else sees).
func (a *App) decidedAtLimitHere(ctx context.Context, r *reviews.File, feature string) bool {
	if !a.insideSession() {
		return false
	}
	open, err := readFile(ctx, a, progress.OpenFileName, "", progress.ParseOpen)
	if err != nil || open == nil {
		return false
	}
	sess, err := boundSession(open, a.caller.Session)
	if err != nil {
		return false
	}
	want := map[string]bool{}
	for _, id := range features.SplitIDs(feature) {
		want[id] = true
	}
	all := r.Reviews()
	for i := len(all) - 1; i >= 0; i-- {
		for _, id := range features.SplitIDs(all[i].Get("feature_id").String()) {
			if want[id] {
				return strings.HasPrefix(all[i].Get("decision.rule").String(), "fix-limit") && all[i].Get("timestamp").String() >= sess.StartedAt
			}
		}
	}
	return false
}

// ownBranch is the branch an agent's session worked on when its record
// names none and the status has none (the predecessor's GLOBAL_FIX prompt
// records no branch): the session's own, as its end would take it.
func (st *state) ownBranch(p *progress.File, open *progress.OpenSessions, who *actor) *string {
	if who == nil || who.Session == nil {
		return nil
	}
	sess, err := open.Get(*who.Session)
	if err != nil {
		return nil
	}
	return st.app.sessionBranch(p, sess)
}
