package bridge

import (
	"encoding/json"
	"fmt"
	"sync"
)

// Mock is an Invoker for tests of orchestrators (seed 000's
// MockAgentInvoker): it answers from canned responses per agent and
// records every invocation.
type Mock struct {
	mu          sync.Mutex
	responses   map[string]string
	failures    map[string]*AgentError
	invocations []Invocation
}

// Invocation is one recorded call.
type Invocation struct {
	Agent  string
	Prompt string
	Opts   InvokeOptions
}

// NewMock returns a mock with the given canned responses (agent → text).
func NewMock(responses map[string]string) *Mock {
	m := &Mock{responses: map[string]string{}, failures: map[string]*AgentError{}}
	for k, v := range responses {
		m.responses[k] = v
	}
	return m
}

// AddResponse sets the canned response of agent.
func (m *Mock) AddResponse(agent, response string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.responses[agent] = response
	delete(m.failures, agent)
}

// AddResponseJSON sets agent's canned response to v encoded as JSON — a
// string, as the envelope's "response" is.
func (m *Mock) AddResponseJSON(agent string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	m.AddResponse(agent, string(data))
	return nil
}

// AddFailure makes agent answer with an error or timeout status.
func (m *Mock) AddFailure(agent, status, errorType, message string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failures[agent] = &AgentError{Agent: agent, RequestID: "mock", Status: status, Type: errorType, Message: message}
}

// Invoke records the call and returns agent's canned response, its canned
// failure as an *AgentError, or an error when none is configured.
func (m *Mock) Invoke(agent, prompt string, opts InvokeOptions) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.invocations = append(m.invocations, Invocation{Agent: agent, Prompt: prompt, Opts: opts})
	if f, ok := m.failures[agent]; ok {
		e := *f
		return "", &e
	}
	if r, ok := m.responses[agent]; ok {
		return r, nil
	}
	return "", fmt.Errorf("mock: no response configured for agent %s", agent)
}

// Invocations returns the recorded calls, of one agent when agent is not "".
func (m *Mock) Invocations(agent string) []Invocation {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Invocation
	for _, inv := range m.invocations {
		if agent == "" || inv.Agent == agent {
			out = append(out, inv)
		}
	}
	return out
}

// Reset forgets the recorded calls.
func (m *Mock) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.invocations = nil
}

var (
	_ Invoker = (*Bridge)(nil)
	_ Invoker = (*Mock)(nil)
)
