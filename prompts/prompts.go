// Package prompts renders the prompt each role's agent is started with:
// short, precise, teaching the role the baton commands it may run and its
// limits. Built-in templates are embedded; a project overrides one by
// putting ROLE.md in .baton/prompts/.
package prompts

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

//go:embed templates/*.md
var builtin embed.FS

// Data is what a template can use.
type Data struct {
	Role         string // the session's role, e.g. IMPLEMENT or BUGFIX
	Session      int
	Project      string
	Feature      string // feature id or batch; "" when none
	Branch       string
	MainBranch   string
	Reason       string // why the workflow chose this step
	MaxFixCycles int
	FixCount     int
	StateDir     string
}

// templateFor maps roles that share instructions to one template.
var templateFor = map[string]string{
	"BUGFIX": "IMPLEMENT", "GLOBAL_FIX": "FIX", "BROWNFIELD_INITIALIZER": "INITIALIZER",
}

// Render renders the prompt for d.Role, preferring dir/ROLE.md (a
// project's override) over the built-in template.
func Render(overrideDir string, d Data) (string, error) {
	name := strings.ToUpper(d.Role)
	if t, ok := templateFor[name]; ok {
		name = t
	}
	src, origin, err := source(overrideDir, name)
	if err != nil {
		return "", err
	}
	t, err := template.New(origin).Option("missingkey=error").Parse(src)
	if err != nil {
		return "", fmt.Errorf("prompt template %s: %w", origin, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("prompt template %s: %w", origin, err)
	}
	return b.String(), nil
}

func source(overrideDir, name string) (string, string, error) {
	if overrideDir != "" {
		p := filepath.Join(overrideDir, name+".md")
		b, err := os.ReadFile(p)
		if err == nil {
			return string(b), p, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", err
		}
	}
	b, err := builtin.ReadFile("templates/" + name + ".md")
	if err != nil {
		return "", "", fmt.Errorf("no prompt template for role %s", name)
	}
	return string(b), "built-in " + name + ".md", nil
}

// Roles lists the roles with a built-in template.
func Roles() []string { return []string{"INITIALIZER", "IMPLEMENT", "REVIEW", "FIX", "ARCHITECTURE"} }
