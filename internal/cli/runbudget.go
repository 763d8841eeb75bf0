package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/baton-cli/baton/internal/agentcli"
	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
)

// What a run's agents spend: the usage each agent's CLI reports is
// recorded as its session's "usage" (with the run it belongs to), and
// --max-cost (else "budget" in .baton/config) stops the run before a
// session would start past its budget.

// usageFileEnv names the file an --agent-cmd agent may write its usage to.
const usageFileEnv = "BATON_USAGE_FILE"

// maxUsageFile bounds what is read of that file.
const maxUsageFile = 64 << 10

// runSpend is the run's identity in the usage it records, and the usage
// of its sessions not yet recorded.
type runSpend struct {
	mu     sync.Mutex
	run    string
	usages map[int]progress.Usage
}

// runID names this run in the usage it records: its start and pid.
func (a *App) runID() string {
	a.spend.mu.Lock()
	defer a.spend.mu.Unlock()
	if a.spend.run == "" {
		a.spend.run = fmt.Sprintf("%s/%d", jsondoc.Timestamp(a.env.Now()), os.Getpid())
	}
	return a.spend.run
}

// offerUsageFile names, in the agent's environment, a fresh file in a
// private directory it may write its usage to; cleanup removes it.
func (a *App) offerUsageFile(cmd *exec.Cmd) (cleanup func()) {
	stateDir, _, _ := a.app.StateDirs()
	dir, err := os.MkdirTemp(privateBase(stateDir, a.env.Cwd), "baton-usage-")
	if err != nil {
		return func() {}
	}
	cmd.Env = append(cmd.Env, usageFileEnv+"="+filepath.Join(dir, "usage.json"))
	return func() { _ = os.RemoveAll(dir) }
}

// collectUsage keeps what st's agent spent: what its CLI reported in its
// output, else what it wrote to its usage file (a file that is not a
// usage object is named in a notice and left out).
func (a *App) collectUsage(o runOpts, st step, cmd *exec.Cmd, out []byte) {
	u := agentcli.Usage(o.Agent, out)
	if path := envValue(cmd.Env, usageFileEnv); u == nil && path != "" {
		data, err := readUsageFile(path)
		if err == nil && data != nil {
			u, err = agentcli.UsageFile(data)
		}
		if err != nil {
			a.notice("[baton run] %s session %d: its %s is not recorded: %v", st.Role, st.Session, usageFileEnv, err)
		}
	}
	if u == nil {
		return
	}
	u.Run = a.runID()
	a.spend.mu.Lock()
	defer a.spend.mu.Unlock()
	if a.spend.usages == nil {
		a.spend.usages = map[int]progress.Usage{}
	}
	a.spend.usages[st.Session] = *u
}

// readUsageFile reads the usage file the agent wrote: a plain file of its
// own, at most maxUsageFile bytes (nil when there is none). baton reads it
// with the person's rights, so a link, to the key say, is refused unread.
func readUsageFile(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("it is not a plain file (%s)", fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink != 1 {
		return nil, fmt.Errorf("it has %d links: write a file of its own", st.Nlink)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxUsageFile+1))
	if err == nil && len(data) > maxUsageFile {
		err = fmt.Errorf("it is over %d bytes", maxUsageFile)
	}
	return data, err
}

// recordUsage writes st's usage into its session's record, once the
// session is ended.
func (a *App) recordUsage(ctx context.Context, st step) {
	a.spend.mu.Lock()
	u, ok := a.spend.usages[st.Session]
	delete(a.spend.usages, st.Session)
	a.spend.mu.Unlock()
	if !ok {
		return
	}
	if err := a.stepApp(false).RecordUsage(ctx, app.Caller{}, st.Session, u); err != nil {
		a.warn("session %d's usage (%s) could not be recorded: %v", st.Session, app.UsageText(u), err)
		return
	}
	a.notice("[baton run] %s session %d spent %s", st.Role, st.Session, app.UsageText(u))
}

// checkBudget stops the run for a person when the next session, on
// features, would start past a budget: the run's (--max-cost, else
// "budget" in .baton/config) or a feature's over every run
// ("feature_budget"). The stop carries failure signature budget and says
// what was spent where.
func (a *App) checkBudget(ctx context.Context, o runOpts, features []string) error {
	limits, _ := a.app.RunSettings()
	budget, source := o.MaxCost, "--max-cost"
	if budget <= 0 {
		budget, source = limits.Budget, `"budget" in .baton/config`
	}
	if budget > 0 {
		costs, err := a.app.CostsNow(ctx, a.runID())
		if err != nil {
			return err
		}
		if costs.Total.CostUSD >= budget {
			return a.budgetStop(ctx, costs, fmt.Sprintf("this run spent $%.4f of its budget of $%.4f (%s)", costs.Total.CostUSD, budget, source), source)
		}
	}
	if limits.FeatureBudget <= 0 || len(features) == 0 {
		return nil
	}
	costs, err := a.app.CostsNow(ctx, "")
	if err != nil {
		return err
	}
	for _, f := range costs.ByFeature {
		if slices.Contains(features, f.Key) && f.CostUSD >= limits.FeatureBudget {
			return a.budgetStop(ctx, costs, fmt.Sprintf("%s has cost $%.4f of its budget of $%.4f (the project config's \"feature_budget\")", f.Key, f.CostUSD, limits.FeatureBudget), `the project config's "feature_budget"`)
		}
	}
	return nil
}

// budgetStop is the stop at a budget: what was spent, and where.
func (a *App) budgetStop(ctx context.Context, costs app.Costs, what, source string) error {
	where := costs.CostLine()
	if f := costs.FeatureLine(); f != "" {
		where += "; by feature: " + f
	}
	sig := failureSignature{Code: "budget", Message: what + ": " + where, StageID: "RUN", Severity: "error"}
	b, _ := json.Marshal(sig)
	a.notice("[baton run] STOPPED: failure signature %s", b)
	if err := a.app.LogRunNote(ctx, "stopped at the budget: "+sig.Message); err != nil {
		a.warn("the budget stop could not be written to the audit log: %v", err)
	}
	return errs.New(errs.Budget, "the run is stopped for a person before its next session: %s. Raise the budget (%s) and run it again to continue", sig.Message, source)
}

// envValue is the value of key in env ("" when unset).
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
