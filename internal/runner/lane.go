package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"time"
)

// Lane is one session's clone on a runner, as the launcher drives it.
type Lane struct {
	Runner Runner
	Place  Place
	Branch string // the branch the clone has checked out (the lane's, or the base)
	Base   string
}

// Source is what a lane's clone is made from: a local working copy with
// the lane's branch (and its base), and the committer identity to use.
type Source struct {
	Dir, Branch, Base, Name, Email string
}

// Open makes session's clone on r for project: its place made fresh by
// r's baton, then the branch and its base pushed from src. A runner that
// must confine its agents and cannot is refused here, before anything
// runs there.
func Open(ctx context.Context, r Runner, project string, session int, src Source) (*Lane, error) {
	out, err := r.run(ctx, "baton", Hidden, "prepare", project, strconv.Itoa(session), src.Name, src.Email)
	if err != nil {
		return nil, err
	}
	var p Place
	if err := json.Unmarshal(out, &p); err != nil || p.Repo == "" {
		return nil, fmt.Errorf("runner %s: its baton's prepare did not answer in JSON (an older baton?)", r.Name)
	}
	l := &Lane{Runner: r, Place: p, Branch: src.Branch, Base: src.Base}
	if err := p.compatible(r); err != nil {
		l.Remove(ctx)
		return nil, err
	}
	if l.Branch == "" {
		l.Branch = src.Base
	}
	specs := []string{"refs/heads/" + l.Branch + ":refs/heads/" + l.Branch}
	if src.Base != "" && src.Base != l.Branch {
		specs = append(specs, "refs/heads/"+src.Base+":refs/heads/"+src.Base)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if err := r.gitTo(pctx, src.Dir, append([]string{"push", "--quiet", "--no-verify", r.url(p.Repo)}, specs...)...); err != nil {
		l.Remove(ctx)
		return nil, err
	}
	return l, nil
}

// compatible refuses a runner whose baton speaks another protocol, or
// that must confine its agents and has no sandbox.
func (p Place) compatible(r Runner) error {
	if p.Protocol != Protocol {
		return &MissingError{Runner: r.Name, What: fmt.Sprintf("baton speaking this baton's runner protocol %d", Protocol),
			Detail: fmt.Sprintf("its baton %s speaks %d: install the launcher's baton version there", p.Version, p.Protocol)}
	}
	if r.Confined() && p.Sandbox == "" {
		return &MissingError{Runner: r.Name, What: "sandbox", Detail: `its kernel offers no Landlock (Linux 6.2 or later): set "sandbox": "auto" for it to run its agents unconfined`}
	}
	return nil
}

// Agent is the ssh process that runs argv as the lane's agent on the
// runner, confined to its clone, with the launcher's broker socket sock
// forwarded to the clone's socket. Its stdin is the agent's.
func (l *Lane) Agent(ctx context.Context, sock string, argv []string) *exec.Cmd {
	mode := SandboxOn
	if !l.Runner.Confined() {
		mode = SandboxAuto
	}
	fwd := []string{"-R", l.Place.Sock + ":" + sock, "-o", "StreamLocalBindUnlink=yes", "-o", "ExitOnForwardFailure=yes",
		"-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3"}
	remote := append([]string{"baton", Hidden, "exec", l.Place.Root, mode, l.Branch, "--"}, argv...)
	return l.Runner.command(ctx, fwd, remote...)
}

// Fetch brings the lane's branch from the runner's clone into the local
// working copy at dir, as it is there (the working copy's import decides
// what reaches the project).
func (l *Lane) Fetch(ctx context.Context, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	ref := "refs/heads/" + l.Branch
	return l.Runner.gitTo(ctx, dir, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--update-head-ok", l.Runner.url(l.Place.Repo), "+"+ref+":"+ref)
}

// Remove deletes the lane's place on the runner (best effort: a runner
// that cannot be reached keeps it until the project's next run there).
func (l *Lane) Remove(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, _ = l.Runner.run(ctx, "baton", Hidden, "remove", l.Place.Root)
}

// Lost says whether the agent's ssh ended because the runner was lost:
// ssh's own failure status, and the runner no longer answering.
func (l *Lane) Lost(ctx context.Context, waitErr error) bool {
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) || ee.ExitCode() != lostStatus {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var ue *UnreachableError
	return errors.As(l.Runner.Reachable(ctx), &ue)
}
