package bridge

import (
	"encoding/json"
	"fmt"

	"github.com/baton-cli/baton/internal/errs"
)

// Checkpoint names (checkpoint_name, and seed 001's checkpoint).
const (
	CheckpointStarted  = "started"
	CheckpointPending  = "agent_request_pending"
	CheckpointAnswered = "agent_response_consumed"
	CheckpointDone     = "complete"
)

// Request record statuses (seed 000's agent_requests[].status).
const (
	RecordPending   = "pending"
	RecordCompleted = "completed"
)

// Checkpoint is a run's resume state (.baton/bridge/checkpoint.json): the
// seeds' state-file fields, and the history of the run's requests, which
// is what a resumed run replays.
type Checkpoint struct {
	Version         string                     `json:"version"`
	RunID           string                     `json:"run_id"`
	Phase           int                        `json:"phase"`
	PhaseName       string                     `json:"phase_name"`
	CheckpointName  string                     `json:"checkpoint_name"`
	Checkpoint      string                     `json:"checkpoint"`
	CreatedAt       string                     `json:"created_at"`
	UpdatedAt       string                     `json:"updated_at"`
	OutputPath      string                     `json:"output_path"`
	Config          map[string]any             `json:"config"`
	PhaseData       map[string]json.RawMessage `json:"phase_data"`
	CompletedPhases []CompletedPhase           `json:"completed_phases"`
	AgentRequests   []RequestRecord            `json:"agent_requests"`
	Pending         *PendingRef                `json:"agent_request_pending"`
	// RequestMirror is the copy of the outstanding request written in the
	// orchestrator's working directory, when that is another directory of
	// the project.
	RequestMirror string `json:"request_mirror,omitempty"`
}

// CompletedPhase is a phase whose agent answered (seed 000).
type CompletedPhase struct {
	Phase         int    `json:"phase"`
	PhaseName     string `json:"phase_name"`
	CompletedAt   string `json:"completed_at"`
	ResultSummary string `json:"result_summary"`
}

// RequestRecord is one request of the run, keyed by phase.
type RequestRecord struct {
	RequestID      string `json:"request_id"`
	AgentName      string `json:"agent_name"`
	Phase          int    `json:"phase"`
	PhaseName      string `json:"phase_name"`
	Status         string `json:"status"`
	ResponseStatus string `json:"response_status,omitempty"`
	CreatedAt      string `json:"created_at"`
	AnsweredAt     string `json:"answered_at,omitempty"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty"`
	ResponseFile   string `json:"response_file,omitempty"`
	// Key is the digest of agent, phase name, prompt and context the
	// request is known by; RetryCount how many times it was asked before.
	Key        string `json:"request_key,omitempty"`
	RetryCount int    `json:"retry_count"`
	// RequestFile is the request as written (the store keeps it, so a
	// deleted request file is written again); TokenSHA256 the hash of the
	// host token an answer must carry.
	RequestFile string `json:"request_file,omitempty"`
	TokenSHA256 string `json:"host_token_sha256,omitempty"`
}

// PendingRef names the outstanding request (seed 001).
type PendingRef struct {
	RequestID string `json:"request_id"`
	CreatedAt string `json:"created_at"`
}

// LoadCheckpoint reads and validates the checkpoint at path: (nil, nil)
// when there is none, an errs.Invalid error when it is damaged.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	data, err := readIfExists(path)
	if err != nil || data == nil {
		return nil, err
	}
	if ps := Diagnose(KindCheckpoint, data); len(ps) > 0 {
		return nil, errs.New(errs.Invalid, "%s: the bridge checkpoint is invalid: %s — nothing was changed; run '%s'",
			path, joinProblems(ps), FixCommand(KindCheckpoint, ""))
	}
	var cp Checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return nil, errs.New(errs.Invalid, "%s: %v", path, err)
	}
	return &cp, nil
}

func (cp *Checkpoint) save(path string) error {
	if err := writeJSON(path, cp); err != nil {
		return fmt.Errorf("writing the bridge checkpoint: %w", err)
	}
	return nil
}

// byPhase is the request of the given phase, or nil.
func (cp *Checkpoint) byPhase(phase int) *RequestRecord {
	for i := range cp.AgentRequests {
		if cp.AgentRequests[i].Phase == phase {
			return &cp.AgentRequests[i]
		}
	}
	return nil
}

// byKey is every request with the given key, in the order they were made.
func (cp *Checkpoint) byKey(key string) []*RequestRecord {
	var out []*RequestRecord
	for i := range cp.AgentRequests {
		if cp.AgentRequests[i].Key == key {
			out = append(out, &cp.AgentRequests[i])
		}
	}
	return out
}

// nextPhase is the phase number of the run's next request.
func (cp *Checkpoint) nextPhase() int {
	last := 0
	for _, r := range cp.AgentRequests {
		last = max(last, r.Phase)
	}
	return last + 1
}

// byID is the request with the given id, or nil.
func (cp *Checkpoint) byID(id string) *RequestRecord {
	for i := range cp.AgentRequests {
		if cp.AgentRequests[i].RequestID == id {
			return &cp.AgentRequests[i]
		}
	}
	return nil
}

// pending is the outstanding request, or nil.
func (cp *Checkpoint) pending() *RequestRecord {
	if cp == nil || cp.Pending == nil {
		return nil
	}
	return cp.byID(cp.Pending.RequestID)
}

// PendingRecord is the outstanding request's record, or nil.
func (cp *Checkpoint) PendingRecord() *RequestRecord { return cp.pending() }

func (cp *Checkpoint) setName(name string) {
	cp.CheckpointName, cp.Checkpoint = name, name
}

func joinProblems(ps []Problem) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += "; "
		}
		s += p.Message
	}
	return s
}

// describeRecord names a request for messages.
func describeRecord(r *RequestRecord) string {
	return fmt.Sprintf("request %s (phase %d %q, agent %s)", r.RequestID, r.Phase, r.PhaseName, r.AgentName)
}
