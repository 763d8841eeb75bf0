package broker

import (
	"context"
	"reflect"
	"strings"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/workflow"
)

// OwnRole is what a refused agent should do instead.
const OwnRole = "do your role's work with baton's commands from your working copy, then end your session with the outcome that fits"

// Callable refuses an operation no agent's session may call: one no
// operation serves (a command of the launcher's or a person's: run, init,
// key, reconcile, ...), or one only a person or a launcher takes (opening
// a session). "" names none: a command that runs no operation. Which role
// may take an operation an agent may call is the application's check,
// inside the call, as for every front end.
func Callable(op string) error {
	if op == "" {
		return nil
	}
	if o, ok := app.Lookup(op); ok && workflow.AgentMayCall(o.Info().Roles) {
		return nil
	}
	if op == "session.start" {
		return errs.New(errs.Policy, "refused: the launcher opens sessions, and yours is open: %s", OwnRole)
	}
	cmd, _, _ := strings.Cut(op, ".")
	return errs.New(errs.Policy, "refused: 'baton %s' is the launcher's or a person's command, not one an agent runs: %s", cmd, OwnRole)
}

// Overrides refuses what a call was given that no session's call gets: a
// person's override, another state directory or state file.
func Overrides(c app.Call) error {
	switch {
	case c.As != "" || c.Reason != "":
		return errs.New(errs.Policy, "refused: a person's override is not open to an agent's session: %s", OwnRole)
	case c.StateDir != "" || c.File != "":
		return errs.New(errs.Policy, "refused: an agent's calls use its project's state files, and no other: %s", OwnRole)
	}
	return nil
}

// Dispatch runs call with a as caller c: the operation it names, its input
// decoded strictly. The reply carries the result, the error and the
// warnings and notices the operation gave.
func Dispatch(ctx context.Context, a *app.App, c app.Caller, call app.Call) app.Reply {
	op, ok := app.Lookup(call.Op)
	if !ok {
		return app.ReplyOf(nil, Callable(call.Op), nil)
	}
	notes := &app.Notes{}
	out, err := op.Invoke(ctx, a.WithSink(notes), c, call.Input)
	if err != nil && empty(out) {
		out = nil // a failed operation's empty result says nothing
	}
	return app.ReplyOf(out, err, notes.Taken())
}

// empty says whether a result holds nothing: a zero value, or an empty
// list or document.
func empty(out any) bool {
	if out == nil {
		return true
	}
	v := reflect.ValueOf(out)
	return v.IsZero() || (v.Kind() == reflect.Slice && v.Len() == 0)
}
