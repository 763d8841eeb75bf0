package prompts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The predecessor's orchestrator ran one prompt file per session type,
// from its prompts/ directory, filling {{PLACEHOLDER}}s by plain text
// replacement (names it does not know stay as they are, so its prompts'
// own "{{...}}" text is safe). 'baton run --prompts DIR' does the same
// with a directory of those files.

// PredecessorFiles maps a role to the predecessor's prompt file for it.
// FIX answering no review's issues (tech debt) uses the GLOBAL_FIX file, as
// the predecessor did.
var PredecessorFiles = map[string]string{
	"INITIALIZER":            "initializer_prompt.md",
	"BROWNFIELD_INITIALIZER": "brownfield_initializer_prompt.md",
	"IMPLEMENT":              "coding_prompt.md",
	"BUGFIX":                 "bugfix_prompt.md",
	"REVIEW":                 "reviewer_prompt.md",
	"FIX":                    "fix_prompt.md",
	"ARCHITECTURE":           "architecture_reviewer_prompt.md",
	"GLOBAL_FIX":             "global_fix_prompt.md",
}

// Values are the predecessor's placeholders for one session.
func (d Data) Values(inputFile string, featureCount int) map[string]string {
	if featureCount <= 0 {
		featureCount = d.FeatureCount
	}
	return map[string]string{
		"PROJECT_NAME":          d.Project,
		"PROJECT_PATH":          d.ProjectPath,
		"FEATURE_COUNT":         strconv.Itoa(featureCount),
		"MAIN_BRANCH":           d.MainBranch,
		"AGENT_STATE_DIR":       d.StateDir,
		"ARCHITECTURE_INTERVAL": strconv.Itoa(d.ArchitectureInterval),
		"FEATURES_COMPLETED":    strconv.Itoa(d.FeaturesCompleted),
		"TECH_DEBT_THRESHOLD":   strconv.Itoa(d.TechDebtThreshold),
		"INPUT_FILE":            inputFile,
	}
}

// Substitute replaces each {{NAME}} of values in text, as the predecessor
// did; other text, "{{...}}" included, is left as it is.
func Substitute(text string, values map[string]string) string {
	pairs := make([]string, 0, 2*len(values))
	for k, v := range values {
		pairs = append(pairs, "{{"+k+"}}", v)
	}
	return strings.NewReplacer(pairs...).Replace(text)
}

// RenderPredecessor reads role's file from the predecessor's prompt
// directory dir and fills its placeholders. A missing file is an *Error
// naming the file and what the directory should hold.
func RenderPredecessor(dir, role string, values map[string]string) (string, error) {
	name, ok := PredecessorFiles[strings.ToUpper(role)]
	if !ok {
		return "", &Error{File: dir, Msg: fmt.Sprintf("no predecessor prompt file is known for role %s", role)}
	}
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &Error{File: path, Msg: fmt.Sprintf("the %s prompt is missing: the directory given to --prompts holds the predecessor's prompt files (%s)", role, strings.Join(predecessorNames(), ", "))}
	}
	if err != nil {
		return "", err
	}
	return Substitute(string(b), values), nil
}

// CheckPredecessorDir reports the prompt files dir lacks, so that a run
// stops before its first session rather than at the role that needs one.
func CheckPredecessorDir(dir string) []string {
	var missing []string
	for _, n := range predecessorNames() {
		if fi, err := os.Stat(filepath.Join(dir, n)); err != nil || !fi.Mode().IsRegular() {
			missing = append(missing, n)
		}
	}
	return missing
}

func predecessorNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range []string{"INITIALIZER", "BROWNFIELD_INITIALIZER", "IMPLEMENT", "BUGFIX", "REVIEW", "FIX", "ARCHITECTURE", "GLOBAL_FIX"} {
		if n := PredecessorFiles[r]; !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
