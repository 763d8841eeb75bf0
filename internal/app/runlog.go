package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/baton-cli/baton/internal/store"
)

// What baton run records beside the state: each session's log (the prompt,
// the agent's output, how it ended) in .baton/logs/, and while it drives a
// session the run mark .baton/run.json, which lets the next run settle what
// a killed one left.

// sessionLogPath is the log of session id.
func (a *App) sessionLogPath(id int) (string, error) {
	_, batonDir, err := a.StateDirs()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(batonDir, "logs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return filepath.Join(dir, fmt.Sprintf("session-%d.log", id)), nil
}

// WriteSessionLog writes session id's log (best effort: a log that cannot
// be written loses nothing the state holds).
func (a *App) WriteSessionLog(id int, text []byte) {
	if p, err := a.sessionLogPath(id); err == nil {
		_ = os.WriteFile(p, text, 0o644)
	}
}

// AppendSessionLog adds text to session id's log (best effort).
func (a *App) AppendSessionLog(id int, text string) {
	p, err := a.sessionLogPath(id)
	if err != nil {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(text)
}

// runMarkName is the run mark's file in .baton/.
const runMarkName = "run.json"

// RunMark is what a run is doing: its pid, when it started, the session it
// drives and that session's agent's process group.
type RunMark struct {
	PID       int    `json:"pid"`
	StartedAt string `json:"started_at"`
	Session   int    `json:"session,omitempty"`
	AgentPGID int    `json:"agent_pgid,omitempty"`
	// AgentPGIDs are the process groups of the agents of a run's lanes.
	AgentPGIDs []int `json:"agent_pgids,omitempty"`
	// Runners name the runner of each lane's session that runs on one
	// (status shows them).
	Runners map[string]string `json:"runners,omitempty"`
}

func (a *App) runMarkPath() string {
	_, batonDir, err := a.StateDirs()
	if err != nil {
		return ""
	}
	return filepath.Join(batonDir, runMarkName)
}

// MarkRun records m as the run mark (best effort: without it, a kill
// leaves the session for a person to end).
func (a *App) MarkRun(m *RunMark) {
	if p := a.runMarkPath(); p != "" {
		b, _ := json.Marshal(m)
		_ = store.WriteFileAtomic(p, b, 0o644)
	}
}

// UnmarkRun removes the run mark (best effort).
func (a *App) UnmarkRun() {
	if p := a.runMarkPath(); p != "" {
		_ = os.Remove(p)
	}
}

// ReadRunMark is the run mark a run left: nil when there is none; an
// unreadable one is removed and reported as none.
func (a *App) ReadRunMark() (*RunMark, error) {
	p := a.runMarkPath()
	if p == "" {
		return nil, nil
	}
	b, err := store.ReadRegular(p)
	if err != nil || b == nil {
		return nil, err
	}
	var m RunMark
	if json.Unmarshal(b, &m) != nil || m.PID <= 0 {
		return nil, os.Remove(p)
	}
	return &m, nil
}

// ClearRunMark removes the run mark a settled run left (its absence is no
// error).
func (a *App) ClearRunMark() error {
	p := a.runMarkPath()
	if p == "" {
		return nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
