package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The launcher's side: every command it runs to reach a runner is the
// user's ssh (or git over it), with the user's ssh configuration, so that
// host keys are checked as that configuration says. baton adds only
// BatchMode (never a password prompt under a run) and, for a lane's agent,
// the socket forwarding and keep-alives.

// Hidden is the hidden first argument of the runner's side of baton:
// baton __runner probe|prepare|exec|remove|clean ...
const Hidden = "__runner"

// Protocol is the version of the hidden commands: a runner's baton must
// speak the launcher's.
const Protocol = 2

// lostStatus is the exit status of ssh when the connection failed or
// dropped.
const lostStatus = 255

// sshOptions are the options of every ssh to r: no password prompt, no
// terminal (which would echo a lane's configuration line), none of the
// person's agent or X11 forwarded (whatever the ssh configuration says for
// the host), and a connection of its own, never a shared master that
// would outlive the launcher.
func (r Runner) sshOptions() []string {
	opts := []string{"-T", "-a", "-x", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20", "-o", "ControlMaster=no", "-o", "ControlPath=none"}
	if r.SSHConfig != "" {
		opts = append(opts, "-F", r.SSHConfig)
	}
	if r.Port != 0 {
		opts = append(opts, "-p", strconv.Itoa(r.Port))
	}
	return opts
}

// command is ssh running argv on r (each argument quoted for the remote
// shell, which argv replaces: its parent is the ssh session), with extra
// options before the destination.
func (r Runner) command(ctx context.Context, extra []string, argv ...string) *exec.Cmd {
	args := append(append(r.sshOptions(), extra...), r.SSH, "--", "exec "+Quote(argv))
	return exec.CommandContext(ctx, "ssh", args...)
}

// Quote is argv as one command line of a POSIX shell.
func Quote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// gitSSH is GIT_SSH_COMMAND for git to r.
func (r Runner) gitSSH() string {
	return Quote(append([]string{"ssh"}, r.sshOptions()...))
}

// url is the git address of dir on r.
func (r Runner) url(dir string) string { return r.SSH + ":" + dir }

// run runs argv on r and returns its standard output; a failure says
// whether r could not be reached (ErrUnreachable) or what the command
// said.
func (r Runner) run(ctx context.Context, argv ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := r.command(ctx, nil, argv...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	if err == nil {
		return out.Bytes(), nil
	}
	msg := strings.TrimSpace(stderr.String())
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == lostStatus {
		return nil, &UnreachableError{Runner: r.Name, SSH: r.SSH, Detail: msg}
	}
	if errors.As(err, &ee) && ee.ExitCode() == 127 {
		return nil, &MissingError{Runner: r.Name, What: "baton", Detail: msg}
	}
	return nil, fmt.Errorf("runner %s: %s: %v: %s", r.Name, strings.Join(argv, " "), err, msg)
}

// UnreachableError is a runner ssh could not reach.
type UnreachableError struct {
	Runner, SSH, Detail string
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("runner %s (%s) cannot be reached over ssh: %s", e.Runner, e.SSH, e.Detail)
}

// MissingError is something a runner lacks.
type MissingError struct {
	Runner, What, Detail string
}

func (e *MissingError) Error() string {
	msg := fmt.Sprintf("runner %s has no %s", e.Runner, e.What)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// gitTo runs git in dir with the remote side reached over r's ssh.
func (r Runner) gitTo(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.hooksPath=/dev/null", "-C", dir}, args...)...)
	cmd.Env = append(cmd.Environ(), "GIT_SSH_COMMAND="+r.gitSSH(), "GIT_SSH_VARIANT=ssh")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("runner %s: git %s: %v: %s", r.Name, args[0], err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// Reachable checks that r answers over ssh.
func (r Runner) Reachable(ctx context.Context) error {
	_, err := r.run(ctx, "true")
	return err
}

// Probe asks r's baton what it offers; programs are the agent programs
// the run needs there.
func (r Runner) Probe(ctx context.Context, programs []string) (Facts, error) {
	out, err := r.run(ctx, append([]string{"baton", Hidden, "probe"}, programs...)...)
	if err != nil {
		return Facts{}, err
	}
	var f Facts
	if err := json.Unmarshal(out, &f); err != nil {
		return Facts{}, fmt.Errorf("runner %s: its baton's probe did not answer in JSON (an older baton?): %v", r.Name, err)
	}
	return f, nil
}

// Clean removes what an earlier run of project left on r (its lanes'
// clones): a run's lanes are r's only users of project's directory.
func (r Runner) Clean(ctx context.Context, project string) error {
	_, err := r.run(ctx, "baton", Hidden, "clean", project)
	return err
}
