package progress

import (
	"encoding/json"
	"fmt"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// OpenFileName is where sessions that have started but not ended are kept,
// inside .baton/: they are baton's run state, and progress.json holds only
// finished sessions, as the seed's readers expect.
const OpenFileName = ".baton/sessions.json"

// OpenSession is a session between `session start` and `session end`.
type OpenSession struct {
	SessionID  int      `json:"session_id"`
	AgentType  string   `json:"agent_type"`
	StartedAt  string   `json:"started_at"`
	Features   []string `json:"features"`
	Branch     *string  `json:"branch"`
	BaseCommit *string  `json:"base_commit"`
	Phase      string   `json:"phase"`
	// How the session's credential is checked: the credential itself is
	// never stored, only its sha256. Nonce is what an older baton derived
	// the credential from; it is no longer written.
	CredentialHash string `json:"credential_sha256,omitempty"`
	Nonce          string `json:"nonce,omitempty"`
	OpenedBy       string `json:"opened_by,omitempty"` // launcher or person
	// RecordedAs is the id of the record the session's agent wrote with
	// 'progress add-session' (as the predecessor's prompts record their
	// work, never with 'session end'): that record is the session's, and
	// ending the session then only closes it.
	RecordedAs int `json:"recorded_as,omitempty"`
	// SentBranch and SentHead are, for a REVIEW session, the branch of
	// the work sent to it and that branch's head when it opened: the
	// work under review, which commits made during the review are not.
	SentBranch string `json:"sent_branch,omitempty"`
	SentHead   string `json:"sent_head,omitempty"`
}

// MarkRecorded notes that open session id recorded its work as record.
func (o *OpenSessions) MarkRecorded(id, record int) {
	for i := range o.Open {
		if o.Open[i].SessionID == id {
			o.Open[i].RecordedAs = record
		}
	}
}

// OpenSessions is the parsed open-sessions file.
type OpenSessions struct {
	Open []OpenSession `json:"open"`
}

// ParseOpen reads the open-sessions file.
func ParseOpen(data []byte) (*OpenSessions, error) {
	if err := jsondoc.Check(data); err != nil {
		return nil, err
	}
	var o OpenSessions
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, &jsondoc.InvalidError{Msg: err.Error()}
	}
	seen := map[int]bool{}
	for i, s := range o.Open {
		if s.SessionID < 1 || seen[s.SessionID] {
			return nil, &jsondoc.InvalidError{Path: fmt.Sprintf("open[%d].session_id", i), Msg: "must be a unique positive whole number"}
		}
		seen[s.SessionID] = true
	}
	return &o, nil
}

// Bytes encodes the file.
func (o *OpenSessions) Bytes() []byte {
	if o.Open == nil {
		o.Open = []OpenSession{}
	}
	return append(jsondoc.Pretty(o), '\n')
}

// MaxID is the highest open session id (0 when none is open).
func (o *OpenSessions) MaxID() int {
	max := 0
	for _, s := range o.Open {
		if s.SessionID > max {
			max = s.SessionID
		}
	}
	return max
}

// Get returns open session id.
func (o *OpenSessions) Get(id int) (OpenSession, error) {
	for _, s := range o.Open {
		if s.SessionID == id {
			return s, nil
		}
	}
	return OpenSession{}, errs.New(errs.NotFound, "session %d is not open (see 'baton session current')", id)
}

// Remove closes open session id.
func (o *OpenSessions) Remove(id int) {
	out := o.Open[:0]
	for _, s := range o.Open {
		if s.SessionID != id {
			out = append(out, s)
		}
	}
	o.Open = out
}

// AddSessionWithID appends a finished session whose id was reserved when it
// opened.
func (f *File) AddSessionWithID(s Session) error {
	s = Normalized(s)
	if _, err := f.doc.Array("sessions").Append(s); err != nil {
		return err
	}
	if s.SessionID > f.maxID {
		f.maxID = s.SessionID
	}
	return nil
}

// Normalized is s with its lists empty rather than null, as it is written.
func Normalized(s Session) Session {
	if s.FeaturesTouched == nil {
		s.FeaturesTouched = []string{}
	}
	if s.Commits == nil {
		s.Commits = []Commit{}
	}
	return s
}

// ReserveAfter makes the next session id follow floor as well as the file's
// own sessions (open sessions hold ids not yet in the file).
func (f *File) ReserveAfter(floor int) {
	if floor > f.maxID {
		f.maxID = floor
	}
}
