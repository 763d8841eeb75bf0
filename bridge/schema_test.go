package bridge

import (
	"testing"
	"time"
)

// The seeds' own examples, checked with the shipped schemas: what any seed
// writes is read; what seed 004 requires is what the strict schema wants.
var (
	seed000Request = `{
  "request_id": "550e8400-e29b-41d4-a716-446655440000", "version": "1.0", "phase": 1,
  "phase_name": "codebase_analysis", "agent_name": "architectural-reviewer",
  "prompt": "# Codebase Analysis Request\n\nYou are analyzing a codebase...",
  "context": {"project_path": "/Users/dev/MyProject", "output_path": "/Users/dev/.agentecflow/templates/my-template", "template_name": "my-template"},
  "timeout_seconds": 120, "created_at": "2025-11-18T10:30:00Z", "retry_count": 0}`
	seed001Request = `{
  "request_id": "a1b2c3d4-e5f6-7890-ab12-3456789abcde", "version": "1.0", "phase": 6,
  "phase_name": "agent_generation", "agent_name": "architectural-reviewer",
  "prompt": "Analyze this codebase and identify ALL specialized AI agents needed for template creation.",
  "timeout_seconds": 120, "created_at": "2025-01-11T10:30:00.000Z",
  "context": {"template_name": "dotnet-maui-clean-mvvm", "language": "C#", "framework": ".NET MAUI", "architecture": "MVVM"}}`
	seed000Success = `{
  "request_id": "550e8400-e29b-41d4-a716-446655440000", "version": "1.0", "status": "success",
  "response": "{\"technology_stack\":{\"primary_language\":\"C#\",\"confidence\":0.95}}",
  "created_at": "2025-11-18T10:31:45Z", "duration_seconds": 105.3,
  "metadata": {"model": "claude-sonnet-4-5-20250929", "tokens_used": 4523, "confidence": 0.92}}`
	seed000Error = `{
  "request_id": "550e8400-e29b-41d4-a716-446655440000", "version": "1.0", "status": "error",
  "error_message": "Agent response could not be parsed as JSON", "error_type": "PARSE_ERROR",
  "created_at": "2025-11-18T10:31:45Z", "duration_seconds": 95.1,
  "metadata": {"model": "claude-sonnet-4-5-20250929", "tokens_used": 3200}}`
	seed001Success = `{
  "request_id": "a1b2c3d4-e5f6-7890-ab12-3456789abcde", "version": "1.0", "status": "success",
  "response": "[\n  {\n    \"name\": \"mvvm-viewmodel-specialist\"\n  }\n]",
  "error_message": null, "error_type": null, "created_at": "2025-01-11T10:30:12.345Z",
  "duration_seconds": 12.345, "metadata": {"agent_name": "architectural-reviewer", "model": "claude-sonnet-4-5", "tokens_used": 4521}}`
	seed001Error = `{
  "request_id": "a1b2c3d4-e5f6-7890-ab12-3456789abcde", "version": "1.0", "status": "error", "response": null,
  "error_message": "Agent invocation failed: Rate limit exceeded", "error_type": "RateLimitError",
  "created_at": "2025-01-11T10:30:05.123Z", "duration_seconds": 5.123, "metadata": {"agent_name": "architectural-reviewer"}}`
	seed004Success = `{
  "request_id": "32ecfadc-2b66-4daa-a7c0-a03c449fcea5", "version": "1.0", "status": "success",
  "response": "{\"sections\": [\"related_templates\", \"examples\", \"boundaries\"]}",
  "error_message": null, "error_type": null, "created_at": "2025-11-24T14:22:45.123456+00:00",
  "duration_seconds": 1.0, "metadata": {}}`
	seed004Error = `{
  "request_id": "32ecfadc-2b66-4daa-a7c0-a03c449fcea5", "version": "1.0", "status": "error", "response": null,
  "error_message": "Agent execution timeout after 120 seconds", "error_type": "timeout",
  "created_at": "2025-11-24T14:24:45.123456+00:00", "duration_seconds": 120.0, "metadata": {}}`
)

func TestBridgeSchemasAcceptTheSeedsExamples(t *testing.T) {
	tests := []struct {
		name   string
		kind   Kind
		doc    string
		strict bool // also valid as seed 004 requires a response
	}{
		{"seed 000 request", KindRequest, seed000Request, false},
		{"seed 001 request", KindRequest, seed001Request, false},
		{"seed 000 success", KindResponseRead, seed000Success, false},
		{"seed 000 error", KindResponseRead, seed000Error, false},
		{"seed 001 success", KindResponseRead, seed001Success, true},
		{"seed 001 error", KindResponseRead, seed001Error, true},
		{"seed 004 success", KindResponseRead, seed004Success, true},
		{"seed 004 error", KindResponseRead, seed004Error, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ps := Diagnose(tt.kind, []byte(tt.doc)); len(ps) > 0 {
				t.Fatalf("%s: %v", tt.kind, ps)
			}
			if tt.kind != KindResponseRead {
				return
			}
			ps := Diagnose(KindResponse, []byte(tt.doc))
			if tt.strict != (len(ps) == 0) {
				t.Fatalf("strict schema: want valid=%v, got %v", tt.strict, ps)
			}
		})
	}
}

// Seed 000's responses leave out what seed 004 requires: read, with a
// warning, but not what a host may write.
func TestBridgeStrictSchemaWantsSeed004Fields(t *testing.T) {
	ps := Diagnose(KindResponse, []byte(seed000Error))
	var fields []string
	for _, p := range ps {
		if p.Code != ProblemMissingField {
			t.Fatalf("unexpected problem %+v", p)
		}
		fields = append(fields, p.Field)
	}
	if got, want := fields, []string{"response"}; len(got) != len(want) || got[0] != want[0] {
		t.Fatalf("missing fields %v, want %v", got, want)
	}
}

func TestBridgeWhatBatonWritesIsValid(t *testing.T) {
	req := &Request{RequestID: newID(), AgentName: "coder", TimeoutSeconds: 5}
	for _, a := range []Answer{
		{Output: `{"ok": true}`, Duration: 1500 * time.Millisecond},
		{Status: StatusError, ErrorMessage: "boom"},
		{Status: StatusTimeout},
	} {
		r, err := NewResponse(req, a, time.Date(2025, 1, 29, 10, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		if ps := Diagnose(KindResponse, mustJSON(r)); len(ps) > 0 {
			t.Fatalf("%s response invalid: %v", a.Status, ps)
		}
	}
	if _, err := NewResponse(req, Answer{Status: StatusCancelled}, time.Now()); err == nil {
		t.Fatal("a host must not write status cancelled (seed 004 allows success, error, timeout)")
	}
}

func TestBridgeSchemaFilesAreShipped(t *testing.T) {
	for k := range schemaFiles {
		raw, err := Schema(k)
		if err != nil || len(raw) == 0 {
			t.Fatalf("%s: %v", k, err)
		}
	}
	if _, err := compiled(); err != nil {
		t.Fatal(err)
	}
}
