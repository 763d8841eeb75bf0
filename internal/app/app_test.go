package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/workflow"
)

// The application layer driven without cobra: a real git repository in a
// temporary directory, a person with their key, sessions bound by their
// credential. Front ends (the MCP server, the broker) can run the same
// cases through Operations.

// sink collects an operation's warnings and notices.
type sink struct {
	mu    sync.Mutex
	lines []string
}

func (s *sink) Warnf(format string, args ...any) { s.add("WARNING: " + fmt.Sprintf(format, args...)) }
func (s *sink) Noticef(format string, args ...any) {
	s.add(fmt.Sprintf(format, args...))
}
func (s *sink) Messages() io.Writer { return s }
func (s *sink) Write(p []byte) (int, error) {
	s.add(strings.TrimSpace(string(p)))
	return len(p), nil
}
func (s *sink) add(l string) { s.mu.Lock(); s.lines = append(s.lines, l); s.mu.Unlock() }

type fixture struct {
	t      testing.TB
	dir    string
	env    map[string]string
	app    *app.App
	sink   *sink
	person app.Caller
}

// newFixture is a git repository with one commit on main, baton's state
// initialised in it by a person who has their key.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "project")
	f := &fixture{t: t, dir: dir, sink: &sink{}, person: app.Caller{As: workflow.Human, Reason: "test"}, env: map[string]string{
		"HOME": filepath.Join(root, "home"), "XDG_CONFIG_HOME": filepath.Join(root, "config"),
		"GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
		"GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
	}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f.git("init", "-q", "-b", "main")
	f.commit("README.md", "hello\n", "initial commit")
	f.app = app.New(app.Env{Stdin: strings.NewReader(""), Getenv: func(k string) string { return f.env[k] }, Cwd: dir, Now: time.Now},
		&app.Options{StateDir: dir}, f.sink)
	ctx := context.Background()
	if _, err := f.app.KeyInit(ctx, app.Caller{}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.app.Init(ctx, f.person, app.InitInput{Name: "demo"}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) git(args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = f.dir
	cmd.Env = append(os.Environ(), "HOME="+f.env["HOME"], "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (f *fixture) commit(name, content, msg string) string {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	f.git("add", name)
	f.git("commit", "-q", "-m", msg)
	return f.git("rev-parse", "--short", "HEAD")
}

// start opens a session for role as the person and returns its caller.
func (f *fixture) start(role, feature, branch string) app.Caller {
	f.t.Helper()
	res, err := f.app.SessionStart(context.Background(), f.person, app.SessionStartInput{Agent: role, Features: feature, Branch: branch})
	if err != nil {
		f.t.Fatalf("session start %s: %v", role, err)
	}
	if res.Env["BATON_SESSION"] == "" || res.CredentialHash != "" {
		f.t.Fatalf("session start %s: credential %q, hash shown %q", role, res.Env["BATON_SESSION"], res.CredentialHash)
	}
	return app.Bound(res.Env["BATON_SESSION"])
}

// wantKind checks that err is an errs error of kind.
func wantKind(t *testing.T, what string, err error, kind errs.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: succeeded, want a %s error", what, kind)
	}
	if got := errs.KindOf(err); got != kind {
		t.Fatalf("%s: %s error (%v), want %s", what, got, err, kind)
	}
}

const oneFeature = `[{"id":"F001","name":"Login","description":"users log in","steps":["open the page"],"passes":false}]`

// A whole cycle without cobra: the list, IMPLEMENT on a branch, a REVIEW
// that passes, the merge, verify.
func TestCycle(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	init := f.start(workflow.Initializer, "", "")
	if res, err := f.app.FeaturesAppend(ctx, init, app.AppendInput{Entries: oneFeature, Source: "spec.md"}); err != nil || len(res.Added) != 1 {
		t.Fatalf("features append: %v %v", res, err)
	}
	if _, err := f.app.SessionEnd(ctx, init, app.SessionEndInput{Outcome: "SUCCESS", Summary: "wrote the list"}); err != nil {
		t.Fatalf("initializer's session end: %v", err)
	}
	n, err := f.app.Next(ctx, app.Caller{})
	if err != nil || n.Phase != workflow.PhaseImplement || app.Deref(n.Feature) != "F001" {
		t.Fatalf("next after the list: %+v %v", n, err)
	}

	impl := f.start(workflow.Implement, "F001", "feature/f001")
	if _, err := f.app.BranchCreate(ctx, impl, app.BranchCreateInput{Name: "feature/f001"}); err != nil {
		t.Fatalf("branch create: %v", err)
	}
	f.git("switch", "-q", "feature/f001")
	f.commit("login.txt", "login\n", "F001: login")
	wantKind(t, "IMPLEMENT marking its own feature passing", func() error { _, err := f.app.FeaturePass(ctx, impl, "F001"); return err }(), errs.Policy)
	if _, err := f.app.SessionEnd(ctx, impl, app.SessionEndInput{Outcome: "READY_FOR_REVIEW", Summary: "login done"}); err != nil {
		t.Fatalf("implement's session end: %v", err)
	}
	f.git("switch", "-q", "main")

	rev := f.start(workflow.Review, "F001", "feature/f001")
	if _, err := f.app.AddReview(ctx, rev, app.AddReviewInput{Agent: workflow.Review, FeatureID: "F001", Branch: "feature/f001", Verdict: "PASS", Summary: "good"}); err != nil {
		t.Fatalf("add-review: %v", err)
	}
	m, err := f.app.ReviewsMerge(ctx, rev, app.MergeInput{})
	if err != nil || m.Into != "main" || len(m.Passed) != 1 || m.Passed[0] != "F001" || !m.BranchDeleted {
		t.Fatalf("reviews merge: %+v %v", m, err)
	}
	if _, err := f.app.SessionEnd(ctx, rev, app.SessionEndInput{Outcome: "SUCCESS", Summary: "merged"}); err != nil {
		t.Fatalf("review's session end: %v", err)
	}
	v, err := f.app.Verify(ctx, app.Caller{}, app.VerifyInput{})
	if err != nil || !v.OK {
		t.Fatalf("verify: %+v %v", v, err)
	}
	if st, err := f.app.Status(ctx, app.Caller{}); err != nil || st.Passing != 1 {
		t.Fatalf("status: %+v %v", st, err)
	}
}

// Refusals come back as errs kinds, before anything is written.
func TestRefusals(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		call func() error
		kind errs.Kind
	}{
		{"a write bound to nothing", func() error {
			_, err := f.app.FeaturesAppend(ctx, app.Caller{}, app.AppendInput{Entries: oneFeature, Source: "spec.md"})
			return err
		}, errs.Policy},
		{"a credential no session holds", func() error {
			_, err := f.app.AddSession(ctx, app.Bound("bts1_0123456789abcdef"), app.AddSessionInput{Agent: "IMPLEMENT", Summary: "x", Outcome: "SUCCESS"})
			return err
		}, errs.Policy},
		{"a person without a reason", func() error {
			_, err := f.app.FeaturesAppend(ctx, app.Caller{As: workflow.Human}, app.AppendInput{Entries: oneFeature, Source: "spec.md"})
			return err
		}, errs.Usage},
		{"merging with no review", func() error {
			_, err := f.app.ReviewsMerge(ctx, f.person, app.MergeInput{})
			return err
		}, errs.NotFound},
		{"a session opened by a session", func() error {
			s := f.start(workflow.Initializer, "", "")
			_, err := f.app.SessionStart(ctx, s, app.SessionStartInput{Agent: workflow.Implement})
			return err
		}, errs.Policy},
	} {
		t.Run(c.name, func(t *testing.T) { wantKind(t, c.name, c.call(), c.kind) })
	}
}

// Every registered operation has a unique name, an input that decodes from
// JSON and rejects unknown fields, and roles from the matrix.
func TestOperations(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	seen := map[string]bool{}
	for _, op := range app.Operations() {
		in := op.Info()
		if seen[in.Name] || in.Name == "" || len(in.Roles) == 0 {
			t.Errorf("operation %+v: a name must be unique and roles given", in)
		}
		seen[in.Name] = true
		if _, err := json.Marshal(op.NewInput()); err != nil {
			t.Errorf("%s: input does not marshal: %v", in.Name, err)
		}
		_, err := op.Invoke(ctx, f.app, f.person, json.RawMessage(`{"no_such_field": 1}`))
		wantKind(t, in.Name+" with an unknown field", err, errs.Usage)
	}
	for _, name := range []string{"session.end", "progress.add-session", "reviews.add-review", "reviews.merge", "features.fail", "next", "status", "verify", "context"} {
		if !seen[name] {
			t.Errorf("operation %s is not registered", name)
		}
	}
	merge, _ := app.Lookup("reviews.merge")
	if in := merge.Info(); !in.Destructive || in.ReadOnly || strings.Join(in.Roles, ",") != "REVIEW,HUMAN" {
		t.Errorf("reviews.merge: %+v", in)
	}
	next, _ := app.Lookup("next")
	out, err := next.Invoke(ctx, f.app, app.Caller{}, nil)
	if n, ok := out.(app.NextResult); err != nil || !ok || n.Phase == "" {
		t.Fatalf("next through the registry: %#v %v", out, err)
	}
}

// One App serves many callers at once (the broker's connections, the MCP
// server's requests): each call is its own, and the writes of one session
// and the reads of others do not mix.
func TestConcurrentCallers(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	init := f.start(workflow.Initializer, "", "")
	var wg sync.WaitGroup
	errc := make(chan error, 32)
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func(i int) {
			defer wg.Done()
			entry := fmt.Sprintf(`[{"id":"F%03d","name":"f%d","description":"d","steps":["s"],"passes":false}]`, i+1, i)
			if _, err := f.app.FeaturesAppend(ctx, init, app.AppendInput{Entries: entry, Source: "spec.md"}); err != nil {
				errc <- fmt.Errorf("append %d: %w", i, err)
			}
		}(i)
		go func() {
			defer wg.Done()
			cur, err := f.app.SessionCurrent(ctx, init)
			if err != nil || len(cur.Sessions) != 1 || cur.Sessions[0].AgentType != workflow.Initializer {
				errc <- fmt.Errorf("session current as the initializer: %+v %v", cur, err)
			}
			if _, err := f.app.Status(ctx, app.Caller{}); err != nil {
				errc <- fmt.Errorf("status: %w", err)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	list, err := f.app.Features(ctx, app.Caller{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.All()); n != 8 {
		t.Fatalf("8 appends made concurrently: %d features", n)
	}
}

// A person's write reads their key once, while it holds the lock: the
// override is checked with it and the same key signs the log entry, which
// verify then authenticates.
func TestPersonKeyReadOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	lookups := 0
	a := app.New(app.Env{Stdin: strings.NewReader(""), Getenv: func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			lookups++ // where the key is: looked up at each read of it
		}
		return f.env[k]
	}, Cwd: f.dir, Now: time.Now}, &app.Options{StateDir: f.dir}, f.sink)
	if _, err := a.FeaturesAppend(ctx, f.person, app.AppendInput{Entries: oneFeature, Source: "spec.md"}); err != nil {
		t.Fatal(err)
	}
	if lookups != 1 {
		t.Errorf("a person's write read the key %d times, want once", lookups)
	}
	res, err := f.app.Verify(ctx, f.person, app.VerifyInput{})
	if err != nil || !res.OK || !res.Authenticated {
		t.Errorf("verify after a person's write: %+v, %v", res, err)
	}
}
