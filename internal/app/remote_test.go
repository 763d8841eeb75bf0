package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
)

// recorder is a remote that keeps the calls sent to it and answers each
// with its reply.
type recorder struct {
	calls []app.Call
	reply app.Reply
}

func (r *recorder) Do(_ context.Context, c app.Call) (app.Reply, error) {
	r.calls = append(r.calls, c)
	return r.reply, nil
}

func remoteApp(t *testing.T, r app.Remote, stdin string) *app.App {
	a := app.New(app.Env{Stdin: strings.NewReader(stdin), Getenv: func(string) string { return "" }, Cwd: t.TempDir(), Now: time.Now}, nil, &sink{})
	a.UseRemote(r)
	return a
}

// Every operation of a remote application is sent, under its own name and
// with its input, and nothing is read here: each operation's method sends
// what the registry would run.
func TestEveryOperationIsSent(t *testing.T) {
	ctx := context.Background()
	inputs := map[string]string{"features.pass-batch": `{"ids": ["F001"]}`, "reviews.add-fix": `{"review_id": 2, "issues_fixed": "-"}`}
	for _, op := range app.Operations() {
		name := op.Info().Name
		rec := &recorder{}
		in := json.RawMessage(inputs[name])
		if _, err := op.Invoke(ctx, remoteApp(t, rec, "[]"), app.Caller{As: "HUMAN", Reason: "r"}, in); err != nil && !strings.HasSuffix(name, ".read") {
			t.Errorf("%s: %v", name, err) // a file read parses the empty answer
		}
		if len(rec.calls) != 1 || rec.calls[0].Op != name {
			t.Errorf("%s sent %+v, want one call of its own name", name, rec.calls)
			continue
		}
		c := rec.calls[0]
		if c.As != "HUMAN" || c.Reason != "r" {
			t.Errorf("%s: the call does not say what it was given: %+v", name, c)
		}
		if len(in) > 0 && !sameJSON(c.Input, in) {
			t.Errorf("%s: input %s, want it to carry %s", name, c.Input, in)
		}
	}
	rec := &recorder{}
	add, _ := app.Lookup("reviews.add-fix")
	_, _ = add.Invoke(ctx, remoteApp(t, rec, "[\"R2-M1\"]"), app.Caller{}, json.RawMessage(inputs["reviews.add-fix"]))
	if string(rec.calls[0].Stdin) != `["R2-M1"]` {
		t.Errorf("an argument reading standard input sends it along: %q", rec.calls[0].Stdin)
	}
}

// A reply comes back as the operation's own result: the fields its JSON
// document leaves out included, its error with its kind and exit code,
// its warnings and notices in the caller's sink.
func TestReplyRoundTrip(t *testing.T) {
	ctx := context.Background()
	feature := "F001, F002"
	res := app.StatusResult{Project: "p", Next: app.NextResult{Phase: "FIX", Feature: &feature, Features: []string{"F001", "F002"}},
		FixCycles: &app.FixCountResult{FeatureID: feature, Features: []string{"F001", "F002"}, FixCount: 3, MaxFixCycles: 3, LimitReached: true}}
	reply := app.ReplyOf(res, errs.New(errs.Policy, "refused: no"), []app.Note{{Warning: true, Text: "w"}, {Text: "n"}})
	if reply.Code != errs.ExitPolicy || reply.Hidden == nil {
		t.Fatalf("reply: %+v", reply)
	}
	s := &sink{}
	a := app.New(app.Env{Getenv: func(string) string { return "" }, Cwd: t.TempDir(), Now: time.Now}, nil, s)
	a.UseRemote(&recorder{reply: reply})
	got, err := a.Status(ctx, app.Caller{})
	if errs.KindOf(err) != errs.Policy || errs.Code(err) != errs.ExitPolicy || err.Error() != "refused: no" {
		t.Errorf("error: %v", err)
	}
	if got.Project != "p" || got.Next.Feature == nil || *got.Next.Feature != feature || got.FixCycles == nil || got.FixCycles.FeatureID != feature || !got.FixCycles.LimitReached {
		t.Errorf("result: %+v next %+v fix cycles %+v", got, got.Next, got.FixCycles)
	}
	if strings.Join(s.lines, "|") != "WARNING: w|n" {
		t.Errorf("notes: %q", s.lines)
	}
	// a file read there is parsed here
	a.UseRemote(&recorder{reply: app.Reply{Result: json.RawMessage(`{"features": [{"id": "F001", "name": "A", "passes": false}]}`)}})
	f, err := a.Features(ctx, app.Caller{})
	if err != nil || len(f.All()) != 1 || f.All()[0].ID != "F001" {
		t.Errorf("features: %v %v", f, err)
	}
}

// sameJSON says whether got holds every member of want.
func sameJSON(got, want json.RawMessage) bool {
	var g, w map[string]any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	for k, v := range w {
		gb, _ := json.Marshal(g[k])
		wb, _ := json.Marshal(v)
		if string(gb) != string(wb) {
			return false
		}
	}
	return true
}
