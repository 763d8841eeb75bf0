package gitops_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// Batons adding their patterns to info/exclude at the same time (projects
// with their own state directories in one repository) each keep theirs:
// the file is read and replaced under its lock.
func TestExcludeAtOnceKeepsEvery(t *testing.T) {
	r := featureRepo(t)
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = gitops.Exclude(filepath.Join(r.dir, fmt.Sprintf("state%d", i)), "# baton", []string{"progress.json"})
		}()
	}
	wg.Wait()
	b, err := os.ReadFile(filepath.Join(r.dir, ".git", "info", "exclude"))
	must(t, err)
	for i := 0; i < n; i++ {
		if errs[i] != nil {
			t.Errorf("Exclude %d: %v", i, errs[i])
		}
		if p := fmt.Sprintf("/state%d/progress.json\n", i); !strings.Contains(string(b), p) {
			t.Errorf("info/exclude lost %s", strings.TrimSpace(p))
		}
	}
}

// A hook installed after InstallHooks looked for foreign hooks but before
// it wrote that one is kept: each hook is read again under its lock.
func TestInstallHooksKeepsOneInstalledMeanwhile(t *testing.T) {
	r := featureRepo(t)
	dir := filepath.Join(r.dir, ".git", "hooks")
	mine := "#!/bin/sh\nexit 0\n"
	ran := false
	restore := gitops.SetAfterStep(func(step string) {
		if step == "temp created" && !ran {
			ran = true
			must(t, os.MkdirAll(dir, 0o755))
			must(t, os.WriteFile(filepath.Join(dir, gitops.HookNames[0]), []byte(mine), 0o755))
		}
	})
	_, err := gitops.InstallHooks(dir, "main")
	restore()
	var fe *gitops.ForeignHooksError
	if !errors.As(err, &fe) {
		t.Errorf("InstallHooks over a hook installed meanwhile: %v, want a ForeignHooksError", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, gitops.HookNames[0])); string(b) != mine {
		t.Errorf("the hook installed meanwhile was overwritten:\n%s", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.lock")); len(left) > 0 {
		t.Errorf("locks left: %v", left)
	}
}
