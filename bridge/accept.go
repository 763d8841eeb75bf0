package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
)

// verdict is what baton makes of a response file.
type verdict struct {
	resp     *Response      // the accepted response; nil when refused
	rec      *RequestRecord // the request it answers
	reason   string         // why it is refused
	problems []Problem      // envelope problems that refuse it
	warnings []Problem      // what seed 004 requires and it lacks (accepted anyway)
}

// judge decides whether data answers the outstanding request of cp (nil:
// there is no run). It changes nothing.
func judge(cp *Checkpoint, data []byte) verdict {
	data = stripBOM(data)
	id := requestIDOf(data)
	pend := cp.pending()
	switch {
	case id == "":
		v := verdict{reason: "it has no request_id, so it answers no request"}
		v.problems = Diagnose(KindResponseRead, data)
		return v
	case cp == nil:
		return verdict{reason: fmt.Sprintf("it answers request %s, but there is no bridge run to answer (a response written before its request?)", id)}
	case pend == nil || id != pend.RequestID:
		return verdict{reason: mismatch(cp, pend, id)}
	}
	v := verdict{rec: pend}
	if v.problems = Diagnose(KindResponseRead, data); len(v.problems) > 0 {
		v.reason = "it is not a valid response envelope"
		return v
	}
	var resp Response
	if err := json.Unmarshal(data, &resp); err != nil {
		v.reason = "it cannot be decoded: " + err.Error()
		return v
	}
	if a, ok := resp.Metadata["agent_name"].(string); ok && a != pend.AgentName {
		v.reason = fmt.Sprintf("its metadata.agent_name is %s, but %s asked agent %s: another phase's response", a, describeRecord(pend), pend.AgentName)
		return v
	}
	if pend.TokenSHA256 != "" {
		if tok, _ := resp.Metadata["host_token"].(string); TokenHash(tok) != pend.TokenSHA256 {
			v.reason = fmt.Sprintf("it does not carry the host token of %s: that request is answered only by the host that ran the orchestrator, with the token it was given at exit 42", describeRecord(pend))
			return v
		}
	}
	v.resp, v.warnings = &resp, Diagnose(KindResponse, data)
	return v
}

// mismatch explains a request_id that is not the outstanding request's.
func mismatch(cp *Checkpoint, pend *RequestRecord, id string) string {
	if rec := cp.byID(id); rec != nil && rec.Status == RecordCompleted {
		return fmt.Sprintf("it answers %s, which was already consumed at %s — a response is used once", describeRecord(rec), rec.AnsweredAt)
	}
	if pend == nil {
		return fmt.Sprintf("no request is outstanding in run %s, and %s is none of its requests (a response written before its request, or for another run)", cp.RunID, id)
	}
	return fmt.Sprintf("its request_id %s does not match the outstanding %s: a stale response to an earlier request", id, describeRecord(pend))
}

func requestIDOf(data []byte) string {
	var m map[string]any
	if json.Unmarshal(stripBOM(data), &m) != nil {
		return ""
	}
	id, _ := m["request_id"].(string)
	return id
}

// resume takes the response to the outstanding request, finishing first a
// consumption a killed process left half done. When the request stays
// outstanding, a request file a host deleted is written again.
func (b *Bridge) resume() error {
	if b.cp == nil {
		return b.nothingToResume()
	}
	if err := b.finishConsumption(); err != nil {
		return err
	}
	path, data, err := b.responseFile(b.cp)
	if err != nil {
		return err
	}
	pend := b.cp.pending()
	if data == nil {
		if pend != nil {
			return errors.Join(b.restoreRequest(), b.noResponse(pend))
		}
		return nil
	}
	v := judge(b.cp, data)
	if v.resp == nil {
		err := b.refuse(path, v)
		return errors.Join(b.restoreRequest(), err)
	}
	if len(v.warnings) > 0 {
		b.warnf("%s was accepted, but it is not what a host must write (%s); write responses with '%s'", path, joinProblems(v.warnings), FixCommand(KindResponse, b.o.Dir))
	}
	return b.consume(path, v.rec, v.resp)
}

// responseFile is the response waiting for the run cp: in the state
// directory, else beside the copy of the request in the orchestrator's
// working directory (where a host following seed 001 writes it).
func (b *Bridge) responseFile(cp *Checkpoint) (string, []byte, error) {
	paths := []string{b.p.Response}
	if cp != nil && cp.RequestMirror != "" {
		paths = append(paths, filepath.Join(filepath.Dir(cp.RequestMirror), ResponseFile))
	}
	for _, p := range paths {
		data, err := readIfExists(p)
		if err != nil || data != nil {
			return p, data, err
		}
	}
	return b.p.Response, nil, nil
}

// restoreRequest writes the outstanding request's file again from the
// run's copy when a host has deleted it (seed 001's host does).
func (b *Bridge) restoreRequest() error {
	pend := b.cp.pending()
	if pend == nil || pend.RequestFile == "" || exists(b.p.Request) {
		return nil
	}
	data, err := readIfExists(filepath.Join(b.o.Dir, pend.RequestFile))
	if err != nil || data == nil {
		return err
	}
	b.warnf("%s was deleted while its request %s is outstanding: it is written again", b.p.Request, pend.RequestID)
	return writeAtomic(b.p.Request, data)
}

func (b *Bridge) nothingToResume() error {
	if exists(b.p.Response) {
		return b.refuse(b.p.Response, judge(nil, mustRead(b.p.Response)))
	}
	return errs.New(errs.NotFound, "bridge: nothing to resume: no bridge run in %s; run the orchestrator without --resume to start one", b.o.Dir)
}

func mustRead(path string) []byte {
	data, _ := os.ReadFile(path)
	return data
}

// noResponse is a resume with nothing to resume with. Failing here, rather
// than asking again, is what keeps a host from looping on exit 42 forever.
func (b *Bridge) noResponse(pend *RequestRecord) error {
	msg := fmt.Sprintf("bridge: nothing to resume with: no response to %s at %s. Run the agent on %s, write its answer with '%s', then resume; or re-run without --resume to start over",
		describeRecord(pend), b.p.Response, b.p.Request, b.respondCommand(pend))
	if stray := b.strayResponse(); stray != "" {
		msg += fmt.Sprintf(". (A response exists at %s: it was written relative to another directory; the request names the absolute path to write.)", stray)
	}
	return errs.New(errs.NotFound, "%s", msg)
}

// strayResponse is a response file in the working directory when that is
// not the state directory: a host that wrote to a relative path.
func (b *Bridge) strayResponse() string {
	if b.o.Cwd == "" || filepath.Clean(b.o.Cwd) == filepath.Clean(b.o.Dir) {
		return ""
	}
	if p := filepath.Join(b.o.Cwd, ResponseFile); exists(p) {
		return p
	}
	return ""
}

// RefusedError is a response file that was not accepted: it was set aside
// and nothing was consumed.
type RefusedError struct {
	File       string
	SetAsideAs string
	Reason     string
	Problems   []Problem
}

func (e *RefusedError) Error() string {
	s := fmt.Sprintf("refused %s: %s", e.File, e.Reason)
	if len(e.Problems) > 0 {
		s += " (" + joinProblems(e.Problems) + ")"
	}
	return s + fmt.Sprintf(". It was set aside as %s and nothing was consumed", filepath.Base(e.SetAsideAs))
}

// refuse sets the response at path aside and returns an errs.Conflict error.
func (b *Bridge) refuse(path string, v verdict) error {
	dst, err := b.setAside(path)
	if err != nil {
		return err
	}
	re := &RefusedError{File: path, SetAsideAs: dst, Reason: v.reason, Problems: v.problems}
	next := "; start a run by running the orchestrator without --resume"
	if pend := b.cp.pending(); pend != nil {
		next = fmt.Sprintf("; answer %s with '%s', then resume", describeRecord(pend), b.respondCommand(pend))
	} else if b.cp != nil {
		next = "; no request waits for an answer: re-run the orchestrator with --resume"
	}
	return &errs.Error{Kind: errs.Conflict, Msg: "bridge: " + re.Error() + next, Err: re}
}

// consume moves the response into the run's store (the rename is the
// commit point: it is never read from the response path again) and records
// the request as answered.
func (b *Bridge) consume(path string, rec *RequestRecord, resp *Response) error {
	dst := b.p.answerFile(b.cp.RunID, rec.Phase, rec.RequestID)
	if err := moveInto(path, dst); err != nil {
		return fmt.Errorf("bridge: consuming %s: %w", path, err)
	}
	return b.markAnswered(rec, resp, dst)
}

func (b *Bridge) markAnswered(rec *RequestRecord, resp *Response, stored string) error {
	now := b.now()
	rel, err := filepath.Rel(b.o.Dir, stored)
	if err != nil {
		rel = stored
	}
	rec.Status, rec.ResponseStatus, rec.AnsweredAt, rec.ResponseFile = RecordCompleted, resp.Status, now, rel
	b.cp.Pending = nil
	b.cp.setName(CheckpointAnswered)
	b.cp.CompletedPhases = append(b.cp.CompletedPhases, CompletedPhase{Phase: rec.Phase, PhaseName: rec.PhaseName, CompletedAt: now,
		ResultSummary: fmt.Sprintf("agent %s answered %s in %.1fs", rec.AgentName, resp.Status, resp.DurationSeconds)})
	if err := b.save(); err != nil {
		return err
	}
	b.dropMirror(b.cp, rec.RequestID)
	return b.dropRequestFile(rec.RequestID)
}

// dropRequestFile removes the request file once its request is answered.
func (b *Bridge) dropRequestFile(id string) error {
	data, err := readIfExists(b.p.Request)
	if err != nil || data == nil || requestIDOf(data) != id {
		return err
	}
	return removeIfExists(b.p.Request)
}

// finishConsumption completes a consumption interrupted between the rename
// and the checkpoint write.
func (b *Bridge) finishConsumption() error {
	pend := b.cp.pending()
	if pend == nil {
		return nil
	}
	stored := b.p.answerFile(b.cp.RunID, pend.Phase, pend.RequestID)
	data, err := readIfExists(stored)
	if err != nil || data == nil {
		return err
	}
	var resp Response
	if err := json.Unmarshal(stripBOM(data), &resp); err != nil {
		return errs.New(errs.Invalid, "bridge: %s: %v", stored, err)
	}
	return b.markAnswered(pend, &resp, stored)
}

// respondCommand is the command that answers rec: with the host token it
// needs, as a placeholder (only the host was given it).
func (b *Bridge) respondCommand(rec *RequestRecord) string {
	cmd := FixCommand(KindResponse, b.o.Dir)
	if rec.TokenSHA256 != "" {
		cmd = strings.Replace(cmd, " respond ", " respond --token HOST_TOKEN ", 1) + " (HOST_TOKEN: the token printed to the host when the request was made)"
	}
	return cmd
}
