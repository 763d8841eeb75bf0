package progress

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/jsondoc"
)

// The members progress.json has when work runs item by item (DESIGN.md,
// "Many agents at once"): each item's own pipeline, the lanes of the open
// sessions and the landing queue. A file without them has none of each,
// and each is written only while it holds something.

// PhaseLanding is the phase of an item whose review decided a merge and
// whose features are not passing yet.
const PhaseLanding = "LANDING"

// PipelinePhases are the phases an item's pipeline may be in: a role, the
// landing, or stopped for a person.
var PipelinePhases = []string{"INITIALIZER", "IMPLEMENT", "BUGFIX", "REVIEW", "FIX", "ARCHITECTURE", "GLOBAL_FIX", PhaseLanding, "STOPPED"}

// Pipeline is one item's own decision: the step it waits for and why.
type Pipeline struct {
	Phase     string  `json:"phase"`
	Branch    *string `json:"branch"`
	Rule      string  `json:"rule"`
	Reason    string  `json:"reason"`
	DecidedAt string  `json:"decided_at"`
	// Errors counts the ERROR outcomes in a row of the item's current step.
	Errors int `json:"errors,omitempty"`
}

// Lane is an open session working on one item.
type Lane struct {
	Item    string  `json:"item"`
	Role    string  `json:"role"`
	Session int     `json:"session"`
	Branch  *string `json:"branch"`
	Since   string  `json:"since"`
	// Decided: a decision was made on the item since the lane opened.
	Decided bool `json:"decided,omitempty"`
}

// Landing is an item waiting in the landing queue.
type Landing struct {
	Item     string `json:"item"`
	ReviewID int    `json:"review_id"`
	Branch   string `json:"branch"`
	Head     string `json:"head"`
	QueuedAt string `json:"queued_at"`
	Attempt  int    `json:"attempt"`
}

// lanesState is what the file holds of the members above: the pipelines as
// an object (untouched entries keep their bytes), the lists decoded.
type lanesState struct {
	pipelines *jsondoc.Object
	lanes     []Lane
	landing   []Landing
	// dirty names the members changed since the file was read.
	dirty map[string]bool
}

// readLanes checks and reads the members from the top object.
func readLanes(top *jsondoc.Object) (lanesState, error) {
	ls := lanesState{pipelines: jsondoc.NewObject(1), dirty: map[string]bool{}}
	if raw := top.Raw("pipelines"); raw != nil {
		o, err := jsondoc.ParseObject(raw, 1)
		if err != nil {
			return ls, &jsondoc.InvalidError{Offset: memberOffset(top, "pipelines"), Path: "pipelines", Msg: "must be a JSON object of items"}
		}
		for _, m := range o.Members {
			if err := checkPipeline(m.Raw); err != "" {
				return ls, &jsondoc.InvalidError{Offset: memberOffset(top, "pipelines") + m.Offset, Path: "pipelines." + m.Key, Msg: err}
			}
		}
		ls.pipelines = o
	}
	if err := readList(top, "lanes", &ls.lanes, checkLane); err != nil {
		return ls, err
	}
	return ls, readList(top, "landing", &ls.landing, checkLanding)
}

// readList decodes the array member key into out, each element checked.
func readList[T any](top *jsondoc.Object, key string, out *[]T, check func(gjson.Result) string) error {
	raw := top.Raw(key)
	if raw == nil {
		return nil
	}
	at := memberOffset(top, key)
	r := gjson.ParseBytes(raw)
	if !r.IsArray() {
		return &jsondoc.InvalidError{Offset: at, Path: key, Msg: "must be a JSON array"}
	}
	for i, e := range r.Array() {
		if msg := check(e); msg != "" {
			return &jsondoc.InvalidError{Offset: at + e.Index, Path: fmt.Sprintf("%s[%d]", key, i), Msg: msg}
		}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &jsondoc.InvalidError{Offset: at, Path: key, Msg: err.Error()}
	}
	return nil
}

func checkPipeline(raw []byte) string {
	r := gjson.ParseBytes(raw)
	switch {
	case !r.IsObject():
		return "a pipeline must be a JSON object"
	case !slices.Contains(PipelinePhases, r.Get("phase").String()):
		return fmt.Sprintf("phase must be one of %v, found %s", PipelinePhases, orMissing(r.Get("phase")))
	case r.Get("errors").Exists() && !isCount(r.Get("errors")):
		return "errors must be a whole number"
	}
	var p Pipeline
	if err := json.Unmarshal(raw, &p); err != nil {
		return err.Error()
	}
	return ""
}

func checkLane(r gjson.Result) string {
	switch {
	case !r.IsObject():
		return "a lane must be a JSON object"
	case r.Get("item").Type != gjson.String || r.Get("item").Str == "":
		return "item must be a non-empty string"
	case r.Get("role").Type != gjson.String:
		return "role must be a string"
	case !isCount(r.Get("session")) || r.Get("session").Int() < 1:
		return "session must be a positive whole number"
	}
	return ""
}

func checkLanding(r gjson.Result) string {
	switch {
	case !r.IsObject():
		return "a landing must be a JSON object"
	case r.Get("item").Type != gjson.String || r.Get("item").Str == "":
		return "item must be a non-empty string"
	}
	return ""
}

func isCount(r gjson.Result) bool {
	return r.Type == gjson.Number && r.Num >= 0 && r.Num == float64(int64(r.Num))
}

// writeLanes puts the changed members back into the top object, removing
// those left empty.
func (ls *lanesState) writeLanes(top *jsondoc.Object) {
	if ls.dirty["pipelines"] {
		setOrRemove(top, "pipelines", len(ls.pipelines.Members) > 0, func() []byte { return ls.pipelines.Bytes() })
	}
	if ls.dirty["lanes"] {
		setOrRemove(top, "lanes", len(ls.lanes) > 0, func() []byte { b, _ := jsondoc.Indent(ls.lanes, 1); return b })
	}
	if ls.dirty["landing"] {
		setOrRemove(top, "landing", len(ls.landing) > 0, func() []byte { b, _ := jsondoc.Indent(ls.landing, 1); return b })
	}
	ls.dirty = map[string]bool{}
}

func setOrRemove(top *jsondoc.Object, key string, keep bool, raw func() []byte) {
	if keep {
		top.SetRaw(key, raw())
		return
	}
	top.Members = slices.DeleteFunc(top.Members, func(m jsondoc.Member) bool { return m.Key == key })
}

// Pipelines are the items' pipelines, by item.
func (f *File) Pipelines() map[string]Pipeline {
	out := make(map[string]Pipeline, len(f.ls.pipelines.Members))
	for _, m := range f.ls.pipelines.Members {
		var p Pipeline
		_ = json.Unmarshal(m.Raw, &p) // checked when read
		out[m.Key] = p
	}
	return out
}

// SetPipeline records item's pipeline.
func (f *File) SetPipeline(item string, p Pipeline) error {
	f.ls.dirty["pipelines"] = true
	return f.ls.pipelines.Set(item, p)
}

// RemovePipeline drops item's pipeline (it landed, or went back to the
// queue).
func (f *File) RemovePipeline(item string) {
	o := f.ls.pipelines
	n := len(o.Members)
	o.Members = slices.DeleteFunc(o.Members, func(m jsondoc.Member) bool { return m.Key == item })
	if len(o.Members) != n {
		f.ls.dirty["pipelines"] = true
	}
}

// Lanes are the lanes of the open sessions, in the order they opened.
func (f *File) Lanes() []Lane { return slices.Clone(f.ls.lanes) }

// AddLane records a session's lane.
func (f *File) AddLane(l Lane) {
	f.ls.lanes = append(f.ls.lanes, l)
	f.ls.dirty["lanes"] = true
}

// RemoveLane drops session's lane, if it has one.
func (f *File) RemoveLane(session int) {
	n := len(f.ls.lanes)
	f.ls.lanes = slices.DeleteFunc(f.ls.lanes, func(l Lane) bool { return l.Session == session })
	if len(f.ls.lanes) != n {
		f.ls.dirty["lanes"] = true
	}
}

// DecideLanes marks the lanes working on item as decided.
func (f *File) DecideLanes(item string) {
	for i, l := range f.ls.lanes {
		if l.Item == item && !l.Decided {
			f.ls.lanes[i].Decided = true
			f.ls.dirty["lanes"] = true
		}
	}
}

// SetLaneBranch sets the branch session's lane works on.
func (f *File) SetLaneBranch(session int, branch *string) {
	for i, l := range f.ls.lanes {
		if l.Session == session {
			f.ls.lanes[i].Branch = branch
			f.ls.dirty["lanes"] = true
		}
	}
}

// LaneOf is session's lane.
func (f *File) LaneOf(session int) (Lane, bool) {
	for _, l := range f.ls.lanes {
		if l.Session == session {
			return l, true
		}
	}
	return Lane{}, false
}

// LandingQueue is the landing queue, in order.
func (f *File) LandingQueue() []Landing { return slices.Clone(f.ls.landing) }

// Enqueue puts l at the end of the landing queue, in place of an earlier
// entry of its item.
func (f *File) Enqueue(l Landing) {
	f.Dequeue(l.Item)
	f.ls.landing = append(f.ls.landing, l)
	f.ls.dirty["landing"] = true
}

// Dequeue drops item's entry from the landing queue, if it has one.
func (f *File) Dequeue(item string) {
	n := len(f.ls.landing)
	f.ls.landing = slices.DeleteFunc(f.ls.landing, func(l Landing) bool { return l.Item == item })
	if len(f.ls.landing) != n {
		f.ls.dirty["landing"] = true
	}
}
