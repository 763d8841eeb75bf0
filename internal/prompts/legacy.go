package prompts

import (
	"regexp"
	"sort"
	"strings"
)

// Placeholders maps the predecessor's {{PLACEHOLDER}} names, which its
// prompts used, to the template fields they stand for.
var Placeholders = map[string]string{
	"PROJECT_NAME":          ".Project",
	"PROJECT_PATH":          ".ProjectPath",
	"FEATURE_COUNT":         ".FeatureCount",
	"MAIN_BRANCH":           ".MainBranch",
	"AGENT_STATE_DIR":       ".StateDir",
	"ARCHITECTURE_INTERVAL": ".ArchitectureInterval",
	"FEATURES_COMPLETED":    ".FeaturesCompleted",
	"TECH_DEBT_THRESHOLD":   ".TechDebtThreshold",
	"INPUT_FILE":            ".SpecFile",
	"SESSION_ID":            ".Session",
	"FEATURE_ID":            ".Feature",
	"BRANCH":                ".Branch",
	"ROLE":                  ".Role",
	"MAX_FIX_CYCLES":        ".MaxFixCycles",
	"TEST_COMMAND":          ".TestCommand",
	"CONTEXT":               ".Context",
}

var placeholder = regexp.MustCompile(`\{\{\s*([A-Z][A-Z0-9_]*)\s*\}\}`)

// legacy turns {{PLACEHOLDER}} names into template fields, keeping every
// line where it was (so errors name the file's own lines). An unknown
// name is an error naming its line and the names there are.
func legacy(origin, src string) (string, error) {
	var bad *Error
	out := placeholder.ReplaceAllStringFunc(src, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		if f, ok := Placeholders[name]; ok {
			return "{{" + f + "}}"
		}
		if bad == nil {
			line := strings.Count(src[:strings.Index(src, m)], "\n") + 1
			bad = &Error{File: origin, Line: line, Msg: "unknown placeholder {{" + name + "}} (known: " + strings.Join(placeholderNames(), ", ") + ")"}
		}
		return m
	})
	if bad != nil {
		return "", bad
	}
	return out, nil
}

func placeholderNames() []string {
	var n []string
	for k := range Placeholders {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
