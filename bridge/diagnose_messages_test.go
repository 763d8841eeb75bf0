package bridge

import "testing"

// The schema's other rules are named with the field and the rule broken,
// and a number too large to hold is named, not a crash.
func TestBridgeDiagnoseNamesOtherRules(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		doc  string
		want []Problem
	}{
		{"pattern", KindResponse, with("version", `"v1"`),
			[]Problem{{ProblemSchemaViolation, "version", `"version": 'v1' does not match pattern '^\\d+\\.\\d+(\\.\\d+)?$'`}}},
		{"minLength", KindResponse, with("request_id", `""`),
			[]Problem{{ProblemSchemaViolation, "request_id", `"request_id": minLength: got 0, want 1`}}},
		{"maximum", KindResponse, with("metadata", `{"confidence": 2}`),
			[]Problem{{ProblemSchemaViolation, "metadata.confidence", `"metadata.confidence": maximum: got 2, want 1`}}},
		{"minimum", KindResponse, with("duration_seconds", `-0.5`),
			[]Problem{{ProblemSchemaViolation, "duration_seconds", `"duration_seconds": minimum: got -0.5, want 0`}}},
		{"huge negative number", KindResponse, with("duration_seconds", `-1e999999999`),
			[]Problem{{ProblemInvalidValue, "duration_seconds", `"duration_seconds" is -1e999999999, a number whose exponent is too large to read: write a plain number such as 12.5`}}},
		{"huge number", KindResponse, with("duration_seconds", `1e999999999`),
			[]Problem{{ProblemInvalidValue, "duration_seconds", `"duration_seconds" is 1e999999999, a number whose exponent is too large to read: write a plain number such as 12.5`}}},
		{"huge number in an array", KindCheckpoint, `{"completed_phases": [{"phase": 1e-999999999}]}`,
			[]Problem{{ProblemInvalidValue, "completed_phases.0.phase", `"completed_phases.0.phase" is 1e-999999999, a number whose exponent is too large to read: write a plain number such as 12.5`}}},
		{"nullable type", KindResponse, with("error_type", `1`),
			[]Problem{{ProblemWrongType, "error_type", `"error_type" is a number; it must be null or string`}}},
		{"uuid", KindRequest, `{"request_id": "x", "version": "1.0", "phase": 1, "phase_name": "p", "agent_name": "a", "prompt": "p", "created_at": "2025-11-24T14:22:45Z"}`,
			[]Problem{{ProblemInvalidValue, "request_id", `"request_id" is "x", not a valid uuid (such as 550e8400-e29b-41d4-a716-446655440000)`}}},
		{"nested required", KindCheckpoint, `{"version": "1.0", "run_id": "r", "phase": 0, "phase_name": "", "checkpoint_name": "started",
			"created_at": "2025-11-24T14:22:45Z", "output_path": "/s", "agent_requests": [{"request_id": "x", "agent_name": "a", "phase": 1, "phase_name": "p"}]}`,
			[]Problem{{ProblemMissingField, "agent_requests.0.status", `missing required field "agent_requests.0.status"`}}},
		{"trailing data", KindResponse, validResponse + ` {}`,
			[]Problem{{ProblemNotJSON, "", `not JSON (invalid character after top-level value): this looks like the agent's raw output; it must be wrapped in the response envelope`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diagnose(tt.kind, []byte(tt.doc))
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tt.want), list(got))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("problem %d:\n got %+v\nwant %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
