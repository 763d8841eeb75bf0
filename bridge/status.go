package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
)

// Status is the state of the bridge in a state directory, for people and
// hosts deciding what to do next.
type Status struct {
	Dir        string          `json:"state_dir"`
	RunID      string          `json:"run_id,omitempty"`
	Checkpoint string          `json:"checkpoint,omitempty"`
	UpdatedAt  string          `json:"updated_at,omitempty"`
	Pending    *RequestRecord  `json:"pending"`
	Request    string          `json:"request_file,omitempty"`
	Response   *ResponseStatus `json:"response"`
	Requests   []RequestRecord `json:"requests"`
	SetAside   []string        `json:"set_aside"`
}

// ResponseStatus is what a resume would make of the response file.
type ResponseStatus struct {
	Path      string    `json:"path"`
	RequestID string    `json:"request_id,omitempty"`
	Accepted  bool      `json:"accepted"`
	Reason    string    `json:"reason,omitempty"`
	Problems  []Problem `json:"problems,omitempty"`
}

// Inspect reports the bridge's state in dir without changing anything.
func Inspect(dir string) (*Status, error) {
	p := PathsIn(dir)
	cp, err := LoadCheckpoint(p.Checkpoint)
	if err != nil {
		return nil, err
	}
	st := &Status{Dir: dir, Requests: []RequestRecord{}, SetAside: []string{}}
	if cp != nil {
		st.RunID, st.Checkpoint, st.UpdatedAt, st.Pending = cp.RunID, cp.CheckpointName, cp.UpdatedAt, cp.pending()
		st.Requests = cp.AgentRequests
	}
	if exists(p.Request) {
		st.Request = p.Request
	}
	if data, err := readIfExists(p.Response); err != nil {
		return nil, err
	} else if data != nil {
		v := judge(cp, data)
		st.Response = &ResponseStatus{Path: p.Response, RequestID: requestIDOf(data), Accepted: v.resp != nil, Reason: v.reason, Problems: v.problems}
	}
	st.SetAside, err = rejected(dir)
	return st, err
}

func rejected(dir string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(dir, RejectedPattern))
	sort.Strings(m)
	if m == nil {
		m = []string{}
	}
	return m, err
}

// Clean removes every bridge file in dir — the request (and its copy in
// another directory), the response, the set-aside responses, temp files a
// killed write left, the checkpoint and the run store — and returns the
// paths it removed.
func Clean(dir string) (removed []string, err error) {
	err = locked(context.Background(), dir, func() error {
		removed, err = clean(dir)
		return err
	})
	return removed, err
}

func clean(dir string) ([]string, error) {
	p := PathsIn(dir)
	set, err := rejected(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	paths := append([]string{p.Request, p.Response}, set...)
	if cp, err := LoadCheckpoint(p.Checkpoint); err == nil && cp != nil && cp.RequestMirror != "" {
		if data, _ := readIfExists(cp.RequestMirror); requestIDOf(data) != "" && requestIDOf(data) == pendingID(cp) {
			paths = append(paths, cp.RequestMirror)
		}
	}
	for _, path := range append(paths, tempFiles(dir)...) {
		if !exists(path) {
			continue
		}
		if err := os.Remove(path); err != nil {
			return removed, err
		}
		removed = append(removed, path)
	}
	if exists(p.Store) {
		if err := os.RemoveAll(p.Store); err != nil {
			return removed, err
		}
		removed = append(removed, p.Store)
	}
	return removed, nil
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// CheckOutstanding compares a response's request_id with the outstanding
// request of dir: a problem when they differ, nil when they match or when
// nothing is outstanding.
func CheckOutstanding(dir string, data []byte) (*Problem, error) {
	cp, err := LoadCheckpoint(PathsIn(dir).Checkpoint)
	if err != nil {
		return nil, err
	}
	pend := cp.pending()
	id := requestIDOf(data)
	if pend == nil || id == "" || id == pend.RequestID {
		return nil, nil
	}
	return &Problem{Code: ProblemStaleRequest, Field: "request_id", Message: mismatch(cp, pend, id)}, nil
}

func pendingID(cp *Checkpoint) string {
	if cp.Pending == nil {
		return ""
	}
	return cp.Pending.RequestID
}
