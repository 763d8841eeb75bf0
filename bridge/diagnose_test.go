package bridge

import (
	"encoding/json"
	"strings"
	"testing"
)

const validResponse = `{"request_id": "32ecfadc-2b66-4daa-a7c0-a03c449fcea5", "version": "1.0", "status": "success",
 "response": "{\"sections\": []}", "error_message": null, "error_type": null,
 "created_at": "2025-11-24T14:22:45Z", "duration_seconds": 1.0, "metadata": {}}`

// with returns validResponse with member key set to the raw JSON value.
func with(key, raw string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(validResponse), &m); err != nil {
		panic(err)
	}
	m[key] = json.RawMessage(raw)
	return string(mustJSON(m))
}

// The validation messages name seed 004's common mistakes exactly.
func TestBridgeDiagnoseNamesTheSeedsMistakes(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []Problem
	}{
		{"valid", validResponse, nil},
		{"result instead of response", `{"request_id": "x", "version": "1.0", "status": "success", "result": "{}", "error_message": null,
			"error_type": null, "created_at": "2025-11-24T14:22:45Z", "duration_seconds": 1, "metadata": {}}`,
			[]Problem{{ProblemResultField, "result", `found "result" instead of "response": the agent's output belongs in "response", as a string`}}},
		{"response as an object", with("response", `{"sections": []}`),
			[]Problem{{ProblemResponseObject, "response", `"response" is an object, not a string: JSON-encode the agent's output once and put the text in "response", e.g. "{\"sections\": [...]}"`}}},
		{"response as an array", with("response", `["a"]`),
			[]Problem{{ProblemResponseObject, "response", `"response" is an array, not a string: JSON-encode the agent's output once and put the text in "response", e.g. "{\"sections\": [...]}"`}}},
		{"duration as a string", with("duration_seconds", `"1.0"`),
			[]Problem{{ProblemDurationString, "duration_seconds", `"duration_seconds" is the string "1.0", not a number: write it without quotes`}}},
		{"missing fields (seed 004, mistake 4)", `{"status": "success", "response": "{}"}`, []Problem{
			{ProblemMissingField, "request_id", `missing required field "request_id": a string: the request_id of .agent-request.json`},
			{ProblemMissingField, "version", `missing required field "version": a string: "1.0"`},
			{ProblemMissingField, "error_message", `missing required field "error_message": a string, or null on success`},
			{ProblemMissingField, "error_type", `missing required field "error_type": a string, or null on success`},
			{ProblemMissingField, "created_at", `missing required field "created_at": an ISO 8601 time such as 2025-11-24T14:22:45Z`},
			{ProblemMissingField, "duration_seconds", `missing required field "duration_seconds": a number: the seconds the agent took, such as 1.0`},
			{ProblemMissingField, "metadata", `missing required field "metadata": an object, {} when there is nothing to say`},
		}},
		{"raw agent output", `Here is my analysis: ...`, []Problem{{ProblemNotJSON, "",
			`not JSON (invalid character 'H' looking for beginning of value): this looks like the agent's raw output; it must be wrapped in the response envelope`}}},
		{"raw JSON output", `[{"name": "x"}]`, []Problem{{ProblemNotObject, "",
			`the file holds a JSON array, not an object: this looks like the agent's raw output; it must be wrapped in the response envelope`}}},
		{"bad status", with("status", `"done"`),
			[]Problem{{ProblemInvalidValue, "status", `"status" is "done"; it must be one of "success", "error", "timeout"`}}},
		{"bad time", with("created_at", `"yesterday"`),
			[]Problem{{ProblemInvalidValue, "created_at", `"created_at" is "yesterday", not a valid date-time (write an ISO 8601 time such as 2025-11-24T14:22:45Z)`}}},
		{"wrong metadata type", with("metadata", `{"tokens_used": "many"}`),
			[]Problem{{ProblemWrongType, "metadata.tokens_used", `"metadata.tokens_used" is a string; it must be integer`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diagnose(KindResponse, []byte(tt.doc))
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

// Several mistakes at once are all named, the seed's first.
func TestBridgeDiagnoseOrdersMistakes(t *testing.T) {
	doc := `{"request_id": "x", "version": "1.0", "status": "success", "result": {"a": 1}, "duration_seconds": "2", "extra": 1}`
	var codes []string
	for _, p := range Diagnose(KindResponse, []byte(doc)) {
		codes = append(codes, p.Code+":"+p.Field)
	}
	want := "result_instead_of_response:result missing_field:error_message missing_field:error_type missing_field:created_at missing_field:metadata duration_not_number:duration_seconds unknown_field:extra"
	if got := strings.Join(codes, " "); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestBridgeFixCommand(t *testing.T) {
	tests := []struct {
		k    Kind
		dir  string
		want string
	}{
		{KindResponse, "", "baton bridge respond --input AGENT_OUTPUT_FILE"},
		{KindResponse, "/tmp/state", "baton bridge respond --state-dir /tmp/state --input AGENT_OUTPUT_FILE"},
		{KindResponse, "/tmp/my state", "baton bridge respond --state-dir '/tmp/my state' --input AGENT_OUTPUT_FILE"},
		{KindRequest, "", "baton bridge request --agent NAME --prompt-file FILE"},
	}
	for _, tt := range tests {
		if got := FixCommand(tt.k, tt.dir); got != tt.want {
			t.Errorf("FixCommand(%s, %q) = %q, want %q", tt.k, tt.dir, got, tt.want)
		}
	}
}

func list(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Code + " " + p.Field + ": " + p.Message + "\n")
	}
	return b.String()
}
