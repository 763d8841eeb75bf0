package cli

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// A `baton run` killed outright (SIGKILL, a crash, the machine) cannot end
// the session it drove, and its agent runs on as an orphan. So while it
// drives a session it keeps .baton/run.json: its own pid, the session, and
// the agent's process group. The next run finds the file, sees that its
// pid is gone, kills the orphaned agent's process group, and ends the
// session as ERROR (interrupted) before it goes on: it resumes cleanly.

// reclaimDeadRun settles what a killed run left: its agent's process group
// is killed and the session it drove is ended as ERROR (interrupted). A run
// still alive is a conflict.
func (a *App) reclaimDeadRun(ctx context.Context) error {
	m, err := a.app.ReadRunMark()
	if err != nil || m == nil {
		return err
	}
	if m.PID != os.Getpid() && alive(m.PID) {
		return errs.New(errs.Conflict, "another 'baton run' (pid %d) is driving the agents in this project (session %d): wait for it to finish, or stop it (kill %d) — it ends its session when stopped", m.PID, m.Session, m.PID)
	}
	for _, pg := range append([]int{m.AgentPGID}, m.AgentPGIDs...) {
		if pg > 0 {
			_ = syscall.Kill(-pg, syscall.SIGKILL)
		}
	}
	open, err := a.app.SessionCurrent(ctx, app.Caller{})
	if err != nil {
		return err
	}
	{
		since, _ := jsondoc.ParseTime(m.StartedAt)
		for _, s := range open.Sessions {
			started, terr := jsondoc.ParseTime(s.StartedAt)
			if s.SessionID != m.Session && (terr != nil || started.Before(since.Truncate(time.Second))) {
				continue // not opened by the dead run
			}
			a.notice("[baton run] the run that drove session %d (pid %d) was killed: ending the session as ERROR (interrupted)", s.SessionID, m.PID)
			f := &failureSignature{Code: "interrupted", Message: "the baton run driving it was killed; its agent was stopped by the next run", StageID: s.AgentType, Severity: "error"}
			if err := a.checkStep(ctx, step{Role: s.AgentType, Session: s.SessionID}, f); err != nil {
				return err
			}
		}
	}
	return a.app.ClearRunMark()
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
