package bridge

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// File names, as the seeds give them, in the state directory.
const (
	RequestFile  = ".agent-request.json"
	ResponseFile = ".agent-response.json"
)

// Version is the protocol version baton writes.
const Version = "1.0"

// DefaultTimeoutSeconds is a request's timeout when none is given (seed 000).
const DefaultTimeoutSeconds = 120

// MaxTimeoutSeconds bounds a request's timeout (one day).
const MaxTimeoutSeconds = 86400

// Response statuses. baton writes the first three (seed 004); it also
// reads seed 000's cancelled and seed 001's invalid_request.
const (
	StatusSuccess        = "success"
	StatusError          = "error"
	StatusTimeout        = "timeout"
	StatusCancelled      = "cancelled"
	StatusInvalidRequest = "invalid_request"
)

// WriteStatuses are the statuses a host may write.
var WriteStatuses = []string{StatusSuccess, StatusError, StatusTimeout}

// Error types baton writes: seed 000's vocabulary. Any string is read
// (seed 001 writes RateLimitError, seed 004 timeout).
const (
	ErrAgentNotFound    = "AGENT_NOT_FOUND"
	ErrInvocationFailed = "INVOCATION_FAILED"
	ErrTimeout          = "TIMEOUT"
	ErrParse            = "PARSE_ERROR"
	ErrValidation       = "VALIDATION_ERROR"
	ErrUnknown          = "UNKNOWN"
)

// Request is .agent-request.json. baton writes every field, timeout_seconds
// and context included.
type Request struct {
	RequestID      string  `json:"request_id"`
	Version        string  `json:"version"`
	Phase          int     `json:"phase"`
	PhaseName      string  `json:"phase_name"`
	AgentName      string  `json:"agent_name"`
	Prompt         string  `json:"prompt"`
	Context        Context `json:"context"`
	TimeoutSeconds int     `json:"timeout_seconds"`
	CreatedAt      string  `json:"created_at"`
	RetryCount     int     `json:"retry_count"`
}

// Context is a request's context object: baton's keys, which tell a host
// where to write and where the whole prompt is, and the orchestrator's own
// keys (Extra), kept as they are.
type Context struct {
	StateDir       string         `json:"state_dir,omitempty"`
	RequestPath    string         `json:"request_path,omitempty"`
	ResponsePath   string         `json:"response_path,omitempty"`
	RunID          string         `json:"run_id,omitempty"`
	PromptFile     string         `json:"prompt_file,omitempty"`
	PromptBytes    int            `json:"prompt_bytes,omitempty"`
	PromptSHA256   string         `json:"prompt_sha256,omitempty"`
	RespondCommand string         `json:"respond_command,omitempty"`
	RequestKey     string         `json:"request_key,omitempty"`
	Extra          map[string]any `json:"-"`
}

var contextKeys = []string{"state_dir", "request_path", "response_path", "run_id", "prompt_file", "prompt_bytes", "prompt_sha256", "respond_command", "request_key"}

type plainContext Context

// MarshalJSON writes baton's keys and Extra's in one object; baton's win.
func (c Context) MarshalJSON() ([]byte, error) {
	own, err := json.Marshal(plainContext(c))
	if err != nil || len(c.Extra) == 0 {
		return own, err
	}
	m := make(map[string]any, len(c.Extra)+len(contextKeys))
	for k, v := range c.Extra {
		m[k] = v
	}
	var ownMap map[string]any
	if err := json.Unmarshal(own, &ownMap); err != nil {
		return nil, err
	}
	for k, v := range ownMap {
		m[k] = v
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads baton's keys and keeps every other key in Extra.
func (c *Context) UnmarshalJSON(data []byte) error {
	var p plainContext
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	for _, k := range contextKeys {
		delete(m, k)
	}
	*c = Context(p)
	if len(m) > 0 {
		c.Extra = m
	}
	return nil
}

// ResponsePathIn is where the response to r must be written: the response
// file of the state directory dir, the one baton was given. The absolute
// path the request names is for hosts; baton does not follow it, since a
// project that moved would send the answer to where it used to be.
func (r *Request) ResponsePathIn(dir string) string {
	return filepath.Join(dir, ResponseFile)
}

// Response is .agent-response.json as seed 004 requires it: all nine
// fields, response/error_message/error_type a string or null.
type Response struct {
	RequestID       string         `json:"request_id"`
	Version         string         `json:"version"`
	Status          string         `json:"status"`
	Response        *string        `json:"response"`
	ErrorMessage    *string        `json:"error_message"`
	ErrorType       *string        `json:"error_type"`
	CreatedAt       string         `json:"created_at"`
	DurationSeconds float64        `json:"duration_seconds"`
	Metadata        map[string]any `json:"metadata"`
}

// Text is the agent's output ("" when there is none), byte for byte: a
// response whose metadata.response_encoding is base64 is decoded.
func (r *Response) Text() string {
	s := deref(r.Response)
	if enc, _ := r.Metadata["response_encoding"].(string); enc == EncodingBase64 {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			return string(b)
		}
	}
	return s
}

// Err is nil for a success and an *AgentError otherwise: the orchestrator
// decides whether to fall back.
func (r *Response) Err(agent string) error {
	if r.Status == StatusSuccess {
		return nil
	}
	return &AgentError{Agent: agent, RequestID: r.RequestID, Status: r.Status,
		Type: deref(r.ErrorType), Message: deref(r.ErrorMessage), DurationSeconds: r.DurationSeconds}
}

// AgentError is an answer whose status is not success: the agent failed,
// timed out or was cancelled. An orchestrator usually falls back.
type AgentError struct {
	Agent, RequestID, Status, Type, Message string
	DurationSeconds                         float64
}

func (e *AgentError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent %s answered request %s with status %s", e.Agent, e.RequestID, e.Status)
	if e.Type != "" {
		fmt.Fprintf(&b, " (%s)", e.Type)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func ptr(s string) *string { return &s }

// newID returns a random (version 4) UUID.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
