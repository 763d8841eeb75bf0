package cli

import (
	"context"
	"os"
	"os/exec"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
)

// 'baton run --prompts DIR' runs the predecessor's prompt files in place of
// its orchestrator (the work itself is in app/predecessor.go).

// usePrompts checks --prompts, --input-file and --feature-count and hands
// the prompt directory to the application.
func (a *App) usePrompts(o runOpts) error {
	if o.Prompts == "" {
		if o.InputFile != "" || o.FeatureCount != 0 {
			return errs.New(errs.Usage, "--input-file and --feature-count go with --prompts DIR (the predecessor's prompt files)")
		}
		return nil
	}
	if o.FeatureCount < 0 {
		return errs.New(errs.Usage, "--feature-count: must not be negative, got %d", o.FeatureCount)
	}
	if o.InputFile != "" {
		if fi, err := os.Stat(o.InputFile); err != nil || !fi.Mode().IsRegular() {
			return errs.New(errs.NotFound, "--input-file: %s is not a file: give the free-form description the BROWNFIELD_INITIALIZER turns into features and bugs", o.InputFile)
		}
	}
	return a.app.UsePredecessor(&app.Predecessor{Dir: o.Prompts, InputFile: o.InputFile, FeatureCount: o.FeatureCount})
}

// brownfieldStart begins a run with --input-file as the predecessor's
// brownfield mode did: its first session is BROWNFIELD_INITIALIZER, which
// a person (this run's, with their key) asks for on purpose, recorded
// with the reason.
func (a *App) brownfieldStart(ctx context.Context, o runOpts) error {
	if o.InputFile == "" || o.Resume { // a resumed run started already
		return nil
	}
	_, err := a.sub(ctx, nil, "--as", "HUMAN", "--reason", "baton run --prompts --input-file "+o.InputFile+": the brownfield start", "progress", "update-status", "--phase", "INITIALIZER")
	return err
}

// predecessorEnv is what the predecessor's prompts need in the agent's
// environment: the drop-in scripts run this baton (BATON) when no baton is
// on PATH.
func (a *App) predecessorEnv() []string {
	if _, err := exec.LookPath("baton"); err == nil {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{"BATON=" + exe}
}
