package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// Verification evidence: the predecessor's prompts have an agent prepare a
// folder per session (verification/<session>/ in the state directory) in
// which a verification subagent leaves a report (verification.md),
// screenshots and test output, and have REVIEW read its status. The folder
// is the agents' own work product: baton lays it out and reads it, and
// keeps it out of git like the state; it records nothing about it.

// VerificationDirName is the folder, in the state directory, holding one
// folder of evidence per session.
const VerificationDirName = "verification"

// VerificationAgentTypes are the roles whose work a verification covers.
var VerificationAgentTypes = []string{"IMPLEMENT", "FIX", "BUGFIX", "GLOBAL_FIX"}

// PrepareInput asks for a session's verification folder and input file.
type PrepareInput struct {
	SessionID  int      `json:"session_id"`
	FeatureIDs []string `json:"feature_ids"`
	AgentType  string   `json:"agent_type,omitempty"` // IMPLEMENT when empty
}

// VerificationInput is verification_input.json, as the subagent reads it.
type VerificationInput struct {
	SessionID            int               `json:"session_id"`
	FeatureSpecification []json.RawMessage `json:"feature_specifications"`
	FeatureIDs           []string          `json:"feature_ids"`
	TestCommands         []string          `json:"test_commands"`
	AppURLs              struct {
		Frontend string `json:"frontend"`
		Backend  string `json:"backend"`
	} `json:"app_urls"`
	OutputDir string `json:"verification_output_dir"`
	CreatedAt string `json:"created_at"`
	AgentType string `json:"agent_type"`
}

// PrepareResult is where the folder and its input file are, and the input.
type PrepareResult struct {
	Dir       string            `json:"dir"`
	InputFile string            `json:"input_file"`
	Input     VerificationInput `json:"input"`
	Missing   []string          `json:"missing_feature_ids"` // named but not in the feature list
}

// VerificationSessionInput names the session whose folder is meant.
type VerificationSessionInput struct {
	SessionID int `json:"session_id"`
}

// VerificationReportResult is where the report template was written.
type VerificationReportResult struct {
	Report string `json:"report"`
}

// verificationOps are the verification commands as operations, so that an
// agent's session reaches them through its broker as the prompts that call
// them expect. Every role may call them: they lay out and read the agents'
// own evidence and record nothing.
func verificationOps() []Operation {
	all := workflow.CallableBy("", true)
	prepare := info("verification.prepare", "Make a session's verification folder and its verification_input.json", "", false, false)
	report := info("verification.report", "Write the report template of a session's verification folder", "", false, false)
	prepare.Roles, report.Roles = all, all
	return []Operation{
		Op[PrepareInput, PrepareResult]{prepare, (*App).VerificationPrepare},
		Op[VerificationSessionInput, VerificationStatus]{info("verification.status", "Whether a session's verification is not started, awaiting its report, or what the report concludes", "", true, false),
			func(a *App, ctx context.Context, c Caller, in VerificationSessionInput) (VerificationStatus, error) {
				return a.VerificationStatus(ctx, c, in.SessionID)
			}},
		Op[NoInput, []VerificationEntry]{info("verification.list", "Every session's verification status", "", true, false),
			func(a *App, ctx context.Context, c Caller, _ NoInput) ([]VerificationEntry, error) {
				return a.VerificationList(ctx, c)
			}},
		Op[VerificationSessionInput, VerificationReportResult]{report,
			func(a *App, ctx context.Context, c Caller, in VerificationSessionInput) (VerificationReportResult, error) {
				path, err := a.VerificationReport(ctx, c, in.SessionID)
				return VerificationReportResult{Report: path}, err
			}},
	}
}

// VerificationPrepare makes verification/<session>/ with its screenshots/
// and test_evidence/ folders and writes verification_input.json: the named
// features' records from feature_list.json, the test commands
// ($TEST_COMMANDS, comma-separated) and the app's URLs ($FRONTEND_URL,
// $BACKEND_URL).
func (a *App) VerificationPrepare(ctx context.Context, c Caller, in PrepareInput) (PrepareResult, error) {
	if a.remote != nil {
		return forward[PrepareResult](ctx, a, c, "verification.prepare", in)
	}
	a = a.as(c)
	if in.AgentType == "" {
		in.AgentType = "IMPLEMENT"
	}
	if !contains(VerificationAgentTypes, in.AgentType) {
		return PrepareResult{}, errs.New(errs.Usage, "--agent-type %q: use one of %s", in.AgentType, strings.Join(VerificationAgentTypes, ", "))
	}
	dir, err := a.verificationDir(in.SessionID, true)
	if err != nil {
		return PrepareResult{}, err
	}
	for _, sub := range []string{"screenshots", "test_evidence"} {
		if err := mkdirNoLink(filepath.Join(dir, sub)); err != nil {
			return PrepareResult{}, err
		}
	}
	specs, missing, err := a.featureSpecs(ctx, in.FeatureIDs)
	if err != nil {
		return PrepareResult{}, err
	}
	vi := VerificationInput{SessionID: in.SessionID, FeatureSpecification: specs, FeatureIDs: NonNil(in.FeatureIDs),
		TestCommands: a.envList("TEST_COMMANDS", "pytest tests/", "npm run test"), OutputDir: dir,
		CreatedAt: jsondoc.Timestamp(a.env.Now()), AgentType: in.AgentType}
	vi.AppURLs.Frontend = a.envOr("FRONTEND_URL", "http://localhost:3000")
	vi.AppURLs.Backend = a.envOr("BACKEND_URL", "http://localhost:8000")
	file := filepath.Join(dir, "verification_input.json")
	b, _ := json.MarshalIndent(vi, "", "  ")
	if err := writeNoLink(file, append(b, '\n')); err != nil {
		return PrepareResult{}, err
	}
	if len(missing) > 0 {
		a.warn("no feature in %s matches %s", "feature_list.json", strings.Join(missing, ", "))
	}
	return PrepareResult{Dir: dir, InputFile: file, Input: vi, Missing: NonNil(missing)}, nil
}

// featureSpecs are the records of the named features, in the feature
// list's order, and the ids it does not hold. No feature list: none.
func (a *App) featureSpecs(ctx context.Context, ids []string) ([]json.RawMessage, []string, error) {
	specs := []json.RawMessage{}
	f, err := a.readFeatures(ctx)
	if errs.KindOf(err) == errs.NotFound {
		return specs, ids, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var missing []string
	for _, id := range ids {
		if !f.Has(id) {
			missing = append(missing, id)
		}
	}
	for _, ft := range f.All() {
		if contains(ids, ft.ID) {
			raw, _ := f.Raw(ft.ID)
			specs = append(specs, json.RawMessage(jsondoc.Reindent(raw)))
		}
	}
	return specs, missing, nil
}

// VerificationStatus is what a session's verification folder holds.
type VerificationStatus struct {
	SessionID    int    `json:"session_id"`
	Status       string `json:"status"` // NOT_STARTED, IN_PROGRESS, VERIFIED, NOT_VERIFIED, INCOMPLETE, UNKNOWN
	Message      string `json:"message,omitempty"`
	InputFile    string `json:"input_file,omitempty"`
	ReportPath   string `json:"report_path,omitempty"`
	Screenshots  *int   `json:"screenshots_count,omitempty"`
	TestEvidence *bool  `json:"test_evidence_exists,omitempty"`
	Dir          string `json:"verification_dir,omitempty"`
}

// VerificationStatus reads a session's verification folder: not started,
// awaiting its report, or the status its report concludes with.
func (a *App) VerificationStatus(ctx context.Context, c Caller, session int) (VerificationStatus, error) {
	if a.remote != nil {
		return forward[VerificationStatus](ctx, a, c, "verification.status", VerificationSessionInput{session})
	}
	a = a.as(c)
	dir, err := a.verificationDir(session, false)
	if err != nil {
		return VerificationStatus{}, err
	}
	st := VerificationStatus{SessionID: session}
	input, report := filepath.Join(dir, "verification_input.json"), filepath.Join(dir, "verification.md")
	switch {
	case !isDir(dir):
		st.Status, st.Message = "NOT_STARTED", "Verification directory does not exist"
	case fileExists(input) && !fileExists(report):
		st.Status, st.Message, st.InputFile = "IN_PROGRESS", "Verification input exists, awaiting report", input
	case !fileExists(report):
		st.Status, st.Message = "NOT_STARTED", "No verification report found"
	default:
		st.Status = reportStatus(report, "UNKNOWN")
		n, ev := countPNG(filepath.Join(dir, "screenshots")), fileExists(filepath.Join(dir, "test_evidence", "test_output.txt"))
		st.ReportPath, st.Screenshots, st.TestEvidence, st.Dir = report, &n, &ev, dir
	}
	return st, nil
}

// VerificationEntry is one session's line of the list.
type VerificationEntry struct {
	SessionID   int    `json:"session_id"`
	Status      string `json:"status"`
	Screenshots int    `json:"screenshots"`
}

// VerificationList lists every session's verification folder, by session.
func (a *App) VerificationList(ctx context.Context, c Caller) ([]VerificationEntry, error) {
	if a.remote != nil {
		return forward[[]VerificationEntry](ctx, a, c, "verification.list", nil)
	}
	a = a.as(c)
	base, err := a.verificationBase()
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(base)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, errs.New(errs.Unexpected, "reading %s: %v", base, err)
	}
	out := []VerificationEntry{}
	for _, e := range ents {
		id, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		dir := filepath.Join(base, e.Name())
		status := "NOT_STARTED"
		switch {
		case fileExists(filepath.Join(dir, "verification.md")):
			status = reportStatus(filepath.Join(dir, "verification.md"), "IN_PROGRESS")
		case fileExists(filepath.Join(dir, "verification_input.json")):
			status = "IN_PROGRESS"
		}
		out = append(out, VerificationEntry{SessionID: id, Status: status, Screenshots: countPNG(filepath.Join(dir, "screenshots"))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SessionID < out[j].SessionID })
	return out, nil
}

// VerificationReport writes the report template (verification.md) for a
// session whose folder was prepared, for an agent to complete by hand.
func (a *App) VerificationReport(ctx context.Context, c Caller, session int) (string, error) {
	if a.remote != nil {
		r, err := forward[VerificationReportResult](ctx, a, c, "verification.report", VerificationSessionInput{session})
		return r.Report, err
	}
	a = a.as(c)
	dir, err := a.verificationDir(session, false)
	if err != nil {
		return "", err
	}
	input := filepath.Join(dir, "verification_input.json")
	if !isDir(dir) {
		return "", errs.New(errs.NotFound, "no verification folder %s: run 'prepare --session-id %d' first", dir, session)
	}
	b, err := store.ReadRegular(input)
	if err == nil && b == nil {
		err = errs.New(errs.NotFound, "no verification input %s: run 'prepare --session-id %d' first", input, session)
	}
	if err != nil {
		return "", err
	}
	var vi VerificationInput
	if err := json.Unmarshal(b, &vi); err != nil {
		return "", errs.New(errs.Invalid, "%s: %v; run 'prepare --session-id %d' again to rewrite it", input, err, session)
	}
	report := filepath.Join(dir, "verification.md")
	return report, writeNoLink(report, []byte(reportTemplate(session, vi, jsondoc.Timestamp(a.env.Now()))))
}

// verificationBase is verification/ in the state directory.
func (a *App) verificationBase() (string, error) {
	dir, _, err := a.StateDirs()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, VerificationDirName), nil
}

// verificationDir is a session's folder; make creates it (and lists the
// folder in info/exclude first, as every command that creates state does).
func (a *App) verificationDir(session int, make bool) (string, error) {
	if session < 1 {
		return "", errs.New(errs.Usage, "--session-id %d: a session id is a positive number (see 'baton progress next-session-id')", session)
	}
	base, err := a.verificationBase()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, strconv.Itoa(session))
	if !make {
		return dir, nil
	}
	if _, err := a.excludeState(filepath.Dir(base), VerificationDirName+"/"); err != nil {
		return "", err
	}
	if err := mkdirNoLink(base); err != nil {
		return "", err
	}
	return dir, mkdirNoLink(dir)
}

// mkdirNoLink makes dir unless it is there as a directory; a symbolic link
// (or anything else) in its place is refused, so nothing is written through
// it.
func mkdirNoLink(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return errs.New(errs.Invalid, "%s is not a directory (%s); verification evidence is written only into plain folders — move it away", dir, fi.Mode().Type())
	case !errors.Is(err, fs.ErrNotExist):
		return errs.New(errs.Unexpected, "%v", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return errs.New(errs.Unexpected, "creating %s: %v", dir, err)
	}
	return nil
}

// writeNoLink replaces path atomically, refusing a symbolic link there.
func writeNoLink(path string, data []byte) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return errs.New(errs.Invalid, "%s is not a regular file (%s); move it away", path, fi.Mode().Type())
	}
	if err := store.WriteFileAtomic(path, data, 0o644); err != nil {
		return errs.New(errs.Unexpected, "writing %s: %v", path, err)
	}
	return nil
}

func (a *App) envOr(name, def string) string {
	if v := a.env.Getenv(name); v != "" {
		return v
	}
	return def
}

func (a *App) envList(name string, def ...string) []string {
	if v := a.env.Getenv(name); v != "" {
		return strings.Split(v, ",")
	}
	return def
}

func isDir(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }

func countPNG(dir string) int {
	m, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	return len(m)
}

// reportStatus is the status a report concludes with ("**Status:** X"),
// or other when it names none.
func reportStatus(path, other string) string {
	b, err := store.ReadRegular(path)
	if err != nil {
		return other
	}
	s := string(b)
	for _, st := range []string{"VERIFIED", "NOT_VERIFIED", "INCOMPLETE"} {
		if strings.Contains(s, "**Status:** "+st) {
			return st
		}
	}
	return other
}

func reportTemplate(session int, vi VerificationInput, now string) string {
	agent := vi.AgentType
	if agent == "" {
		agent = "IMPLEMENT"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Verification Report: Session %d\n\n## Metadata\n- **Session ID:** %d\n- **Agent Type:** %s\n- **Timestamp:** %s\n- **Verified By:** [Manual / Verification Subagent]\n\n", session, session, agent, now)
	b.WriteString("## Features Verified\n| Feature ID | Name | Specification Summary |\n|------------|------|----------------------|\n")
	for _, raw := range vi.FeatureSpecification {
		var f struct{ ID, Name, Description string }
		_ = json.Unmarshal(raw, &f)
		fmt.Fprintf(&b, "| %s | %s | %s... |\n", orNA(f.ID), orNA(f.Name), Truncate(orNA(f.Description), 50))
	}
	if len(vi.FeatureSpecification) == 0 {
		for _, id := range vi.FeatureIDs {
			fmt.Fprintf(&b, "| %s | [Name] | [Description] |\n", id)
		}
	}
	b.WriteString(reportBody)
	return b.String()
}

func orNA(s string) string {
	if s == "" {
		return "N/A"
	}
	return s
}

const reportBody = `
---

## Test Evidence

### Tests Created
| Test Name | Purpose | What It Verifies |
|-----------|---------|------------------|
| [test_name] | [purpose] | [what it verifies] |

### Test Execution
- **Command:** [pytest command]
- **Exit Code:** [0 or error code]
- **Result:** [X passed, Y failed]
- **Raw Output:** See ` + "`test_evidence/test_output.txt`" + `

---

## Visual Evidence

### Screenshot: 001-[description].png
- **URL:** [URL tested]
- **What This Shows:** [Description]
- **Expected Per Spec:** [Expected behavior]
- **Match:** [YES / NO]

---

## Specification Compliance Checklist

| Requirement | Evidence | Status |
|-------------|----------|--------|
| [requirement from spec] | [screenshot/test] | [VERIFIED / NOT_VERIFIED] |

---

## Verification Conclusion

**Status:** [VERIFIED / NOT_VERIFIED / INCOMPLETE]
**Reason:** [Explanation]

---

## Limitations Noted

- [What was not tested and why]
`
