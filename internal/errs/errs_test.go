package errs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/baton-cli/baton/internal/errs"
)

func TestCodeForEveryKind(t *testing.T) {
	tests := []struct {
		kind errs.Kind
		code int
		name string
	}{
		{errs.Unexpected, 1, "unexpected"},
		{errs.Usage, 2, "usage"},
		{errs.Policy, 3, "refused"},
		{errs.NotFound, 4, "not_found"},
		{errs.Conflict, 5, "conflict"},
		{errs.Invalid, 6, "invalid_state"},
		{errs.NeedAgent, 42, "need_agent"},
		{errs.Interrupted, 130, "interrupted"},
		{errs.MaxSessions, 7, "max_sessions"},
		{errs.Budget, 8, "budget"},
		{errs.Unreachable, 9, "unreachable"},
	}
	for _, tt := range tests {
		err := errs.New(tt.kind, "something about %s", "x")
		if got := errs.Code(err); got != tt.code {
			t.Errorf("Code(%v) = %d, want %d", tt.kind, got, tt.code)
		}
		if got := errs.KindOf(err); got != tt.kind {
			t.Errorf("KindOf = %v, want %v", got, tt.kind)
		}
		if got := tt.kind.String(); got != tt.name {
			t.Errorf("Kind(%d).String() = %q, want %q", tt.kind, got, tt.name)
		}
		if !errs.Is(err, tt.kind) {
			t.Errorf("Is(err, %v) = false", tt.kind)
		}
		// Wrapped with %w by a caller, the kind and the code survive.
		wrapped := fmt.Errorf("reading progress.json: %w", err)
		if errs.Code(wrapped) != tt.code || errs.KindOf(wrapped) != tt.kind {
			t.Errorf("wrapped %v: code %d kind %v", tt.kind, errs.Code(wrapped), errs.KindOf(wrapped))
		}
		twice := fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", err))
		if errs.Code(twice) != tt.code {
			t.Errorf("wrapped twice %v: code %d", tt.kind, errs.Code(twice))
		}
	}
	// The documented constants match.
	if errs.ExitOK != 0 || errs.ExitUnexpected != 1 || errs.ExitUsage != 2 || errs.ExitPolicy != 3 || errs.ExitNotFound != 4 ||
		errs.ExitConflict != 5 || errs.ExitInvalid != 6 || errs.ExitNeedAgent != 42 || errs.ExitInterrupted != 130 {
		t.Error("exit code constants changed")
	}
}

func TestCodeOfPlainErrors(t *testing.T) {
	if errs.Code(nil) != 0 {
		t.Errorf("Code(nil) = %d", errs.Code(nil))
	}
	for _, err := range []error{errors.New("boom"), fs.ErrNotExist, fmt.Errorf("x: %w", context.DeadlineExceeded)} {
		if errs.Code(err) != 1 || errs.KindOf(err) != errs.Unexpected {
			t.Errorf("Code(%v) = %d, want 1", err, errs.Code(err))
		}
	}
	if errs.Is(nil, errs.Unexpected) {
		t.Error("Is(nil, Unexpected) = true")
	}
	if errs.Is(errs.New(errs.Usage, "u"), errs.NotFound) {
		t.Error("Is(usage, NotFound) = true")
	}
}

func TestNewKeepsCause(t *testing.T) {
	err := errs.New(errs.NotFound, "progress.json: %w", fs.ErrNotExist)
	if err.Error() != "progress.json: file does not exist" {
		t.Errorf("message %q", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("errors.Is does not reach the %w cause")
	}
	var e *errs.Error
	if !errors.As(err, &e) || e.Kind != errs.NotFound || e.Unwrap() != fs.ErrNotExist {
		t.Errorf("As = %+v", e)
	}
	if plain := errs.New(errs.Usage, "no cause %d", 3); errors.Unwrap(plain) != nil || plain.Error() != "no cause 3" {
		t.Errorf("without %%w: %q unwraps to %v", plain, errors.Unwrap(plain))
	}
}

// The outermost kind wins: a command that turns a lower NotFound into a
// usage error gets exit 2, yet the cause is still reachable.
func TestOutermostKindWins(t *testing.T) {
	inner := errs.New(errs.NotFound, "Feature F9 not found")
	outer := errs.New(errs.Usage, "--features: %w", inner)
	if errs.Code(outer) != 2 || errs.KindOf(outer) != errs.Usage {
		t.Errorf("outer code %d", errs.Code(outer))
	}
	if !errors.Is(outer, inner) {
		t.Error("inner error lost")
	}
	direct := &errs.Error{Kind: errs.Interrupted, Msg: "interrupted: x", Err: context.Canceled}
	if errs.Code(fmt.Errorf("run: %w", direct)) != 130 || !errors.Is(direct, context.Canceled) {
		t.Error("a struct literal error does not map or unwrap")
	}
}
