// Package prompts renders the prompt each role's agent is started with:
// who it is, its task with the real values (feature, branch, review id,
// issue ids, spec file), the context package, the exact commands of its
// role in order, and what to do when something goes wrong. Built-in
// templates are embedded, one per role; a project overrides one by putting
// ROLE.md in .baton/prompts/, written with Go template fields or with the
// predecessor's {{PLACEHOLDER}} names.
package prompts

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/template"
)

//go:embed templates/*.md templates/_common.tmpl
var builtin embed.FS

// Data is what a template can use.
type Data struct {
	Role      string // the session's role, e.g. IMPLEMENT or BUGFIX
	Situation string // the kind of work (ctxpack's situations), e.g. REVIEW_REFACTOR
	Session   int
	Project   string
	// ProjectPath is the repository's top directory; StateDir holds the
	// state files.
	ProjectPath, StateDir string
	Feature               string // feature id or batch; "" when none
	Branch                string
	BranchExists          bool
	MainBranch            string
	Reason                string // why the workflow chose this step
	MaxFixCycles          int
	FixCount              int
	// ReviewID is the review a FIX answers; NextReviewID the id the
	// review of a REVIEW or ARCHITECTURE session gets; PrevReviewID the
	// last review of the work a REVIEW re-reviews (0: a first review).
	ReviewID, NextReviewID, PrevReviewID int
	IssuePrefix                          string   // R3- or A3-
	IssueIDs                             []string // the issues a FIX answers
	SpecFile                             string   // the specification (INITIALIZER's input)
	TestCommand                          string
	AgentDocs                            []string // AGENTS.md, CLAUDE.md, ... that exist
	Context                              string   // the context package, rendered
	FeatureCount, FeaturesCompleted      int
	ArchitectureInterval                 int
	TechDebtThreshold                    int
}

// Subject is what a REVIEW reviews, in words.
func (d Data) Subject() string {
	switch d.Situation {
	case "REVIEW_REFACTOR":
		return "the architecture refactor"
	case "REVIEW_DEBT":
		return "the tech-debt work " + d.Feature
	case "REVIEW_BUG":
		return "the fix of bug " + d.Feature
	}
	return d.Feature
}

// AddReview is the start of REVIEW's add-review command with the real
// feature and branch; the verdict and summary follow.
func (d Data) AddReview() string {
	c := "baton reviews add-review -a REVIEW"
	if d.Feature != "" {
		c += " --feature-id " + d.Feature
	}
	return c + " -b " + d.Branch
}

// IssueList is the JSON list of the issues a FIX answers.
func (d Data) IssueList() string {
	var q []string
	for _, id := range d.IssueIDs {
		q = append(q, strconv.Quote(id))
	}
	return "[" + strings.Join(q, ", ") + "]"
}

var funcs = func() template.FuncMap {
	return template.FuncMap{
		"join": strings.Join,
		"first": func(ids string) string {
			id, _, _ := strings.Cut(ids, ",")
			return id
		},
	}
}()

// Error is a template that cannot be used: which file, which line, why.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("prompt template %s: line %d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("prompt template %s: %s", e.File, e.Msg)
}

// Render renders the prompt for d.Role, preferring overrideDir/ROLE.md (a
// project's override) over the built-in template. A template that does not
// parse or execute is an *Error naming the file and line.
func Render(overrideDir string, d Data) (string, error) {
	name := strings.ToUpper(d.Role)
	src, origin, override, err := source(overrideDir, name)
	if err != nil {
		return "", err
	}
	if override {
		if src, err = legacy(origin, src); err != nil {
			return "", err
		}
	}
	common, err := builtin.ReadFile("templates/_common.tmpl")
	if err != nil {
		return "", err
	}
	t := template.New(origin).Option("missingkey=error").Funcs(funcs)
	if _, err := t.New("_common.tmpl").Parse(string(common)); err != nil {
		return "", templateError("built-in _common.tmpl", err)
	}
	if _, err := t.Parse(src); err != nil {
		return "", templateError(origin, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return "", templateError(origin, err)
	}
	return tidy(b.String()), nil
}

// tidy drops trailing spaces and runs of blank lines a template's
// conditionals leave.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" && len(out) > 0 && out[len(out)-1] == "" {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n")) + "\n"
}

var templateLine = regexp.MustCompile(`^template: (.*?):(\d+):(?:\d+:)? ?(.*)$`)

func templateError(origin string, err error) error {
	m := templateLine.FindStringSubmatch(err.Error())
	if m == nil {
		return &Error{File: origin, Msg: err.Error()}
	}
	n, _ := strconv.Atoi(m[2])
	return &Error{File: origin, Line: n, Msg: strings.TrimPrefix(m[3], " ")}
}

// source finds the template of role name: the project's override (its
// own, or that of the role whose rights it has, as BUGFIX has
// IMPLEMENT's), else the built-in one.
func source(overrideDir, name string) (src, origin string, override bool, err error) {
	if overrideDir != "" {
		for _, n := range []string{name, aliasOf[name]} {
			if n == "" {
				continue
			}
			p := filepath.Join(overrideDir, n+".md")
			b, err := os.ReadFile(p)
			if err == nil {
				return string(b), p, true, nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return "", "", false, &Error{File: p, Msg: err.Error()}
			}
		}
	}
	b, err := builtin.ReadFile("templates/" + name + ".md")
	if err != nil {
		return "", "", false, &Error{File: name + ".md", Msg: "no prompt template for role " + name}
	}
	return string(b), "built-in " + name + ".md", false, nil
}

// aliasOf maps the roles that have another role's rights to it.
var aliasOf = map[string]string{"BUGFIX": "IMPLEMENT", "GLOBAL_FIX": "FIX", "BROWNFIELD_INITIALIZER": "INITIALIZER"}

// Roles lists the roles with a built-in template.
func Roles() []string {
	return []string{"INITIALIZER", "BROWNFIELD_INITIALIZER", "IMPLEMENT", "BUGFIX", "REVIEW", "FIX", "GLOBAL_FIX", "ARCHITECTURE"}
}
