package progress_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
)

func TestPipelinesAndLanes(t *testing.T) {
	f := mustParse(t, seedProgress)
	if len(f.Pipelines()) != 0 || len(f.Lanes()) != 0 || len(f.LandingQueue()) != 0 {
		t.Fatal("the seed has no pipelines, lanes or queue")
	}
	branch := "feature/a"
	if err := f.SetPipeline("F001", progress.Pipeline{Phase: "REVIEW", Branch: &branch, Rule: "implemented", Reason: "ready", DecidedAt: "2025-01-29T10:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	f.AddLane(progress.Lane{Item: "F002", Role: "IMPLEMENT", Session: 3, Since: "2025-01-29T10:00:00Z"})
	out := f.Bytes()
	g := mustParse(t, string(out))
	if p := g.Pipelines()["F001"]; p.Phase != "REVIEW" || *p.Branch != branch || p.Rule != "implemented" {
		t.Errorf("pipeline read back: %+v", p)
	}
	if l, ok := g.LaneOf(3); !ok || l.Item != "F002" || l.Role != "IMPLEMENT" {
		t.Errorf("lane read back: %+v %v", l, ok)
	}
	// the new members come after the seed's, which keep their order
	s := string(out)
	if h, i, j, k := strings.Index(s, `"status"`), strings.Index(s, `"sessions"`), strings.Index(s, `"pipelines"`), strings.Index(s, `"lanes"`); !(h < i && i < j && j < k) {
		t.Errorf("member order:\n%s", out)
	}
	if gjson.Get(s, "sessions.1.commit_range.to").String() != "h7i8j9k" {
		t.Error("a session changed")
	}
	// emptied, the members go
	g.RemovePipeline("F001")
	g.RemoveLane(3)
	if again := string(g.Bytes()); strings.Contains(again, `"pipelines"`) || strings.Contains(again, `"lanes"`) || !jsonEqual(t, []byte(again), []byte(seedProgress)) {
		t.Errorf("emptied members stay:\n%s", again)
	}
}

func TestPipelinesKeepOtherEntries(t *testing.T) {
	data := strings.Replace(seedProgress, `"sessions": [`, `"pipelines": {"F009": {"phase": "FIX", "branch": null, "rule": "r", "reason": "x", "decided_at": "t", "runner": {"kept": [1, 2]}}}, "sessions": [`, 1)
	f := mustParse(t, data)
	if err := f.SetPipeline("F001", progress.Pipeline{Phase: "REVIEW"}); err != nil {
		t.Fatal(err)
	}
	out := f.Bytes()
	if gjson.GetBytes(out, "pipelines.F009.runner.kept.1").Int() != 2 || gjson.GetBytes(out, "pipelines.F001.phase").String() != "REVIEW" {
		t.Errorf("another item's pipeline lost a field:\n%s", out)
	}
}

func TestPipelinesInvalid(t *testing.T) {
	for _, tc := range []struct{ member, path string }{
		{`"pipelines": [], `, "pipelines"},
		{`"pipelines": {"F001": {"phase": "DONE"}}, `, "pipelines.F001"},
		{`"pipelines": {"F001": {"phase": "REVIEW", "errors": -1}}, `, "pipelines.F001"},
		{`"pipelines": {"F001": 3}, `, "pipelines.F001"},
		{`"pipelines": {"F001": {"phase": "REVIEW", "branch": 7}}, `, "pipelines.F001"},
		{`"lanes": {}, `, "lanes"},
		{`"lanes": [{"item": "", "role": "IMPLEMENT", "session": 1}], `, "lanes[0]"},
		{`"lanes": [{"item": "F001", "role": "IMPLEMENT", "session": 0}], `, "lanes[0]"},
		{`"lanes": [{"item": "F001", "role": "IMPLEMENT", "session": 1}, 5], `, "lanes[1]"},
		{`"landing": [{"review_id": 1}], `, "landing[0]"},
	} {
		data := strings.Replace(seedProgress, `"sessions": [`, tc.member+`"sessions": [`, 1)
		_, err := progress.Parse([]byte(data))
		var ie *jsondoc.InvalidError
		if !errors.As(err, &ie) || !strings.HasPrefix(ie.Path, tc.path) {
			t.Errorf("%s: %v, want an invalid file at %s", tc.member, err, tc.path)
		}
	}
}
