package cli

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
)

//go:embed report.html.tmpl
var reportTemplate string

func (a *App) newReportCmd() *cobra.Command {
	var out string
	var fromGit bool
	c := &cobra.Command{
		Use:   "report -o FILE.html",
		Short: "Write the audit report: one self-contained HTML file to share with someone who does not run baton",
		Long: `Write one self-contained HTML file (no network, no external files) telling what the agents did:
the project's timeline, each feature's, bug's and debt item's story, the review cycles with their
issues and the fixes that answered them, the fix-cycle decisions, the commits and merges, the
refused attempts, and the result of 'baton verify'. Keys in the report: j/k next/previous
section, g top, / filter the timeline, ? help. It prints cleanly (every section expanded).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runReport(c.Context(), out, fromGit) },
	}
	c.Flags().StringVarP(&out, "output", "o", "", "the HTML file to write (required; - for stdout)")
	c.Flags().BoolVar(&fromGit, "from-git", false, "write it from the repository's attestations alone (refs/notes/baton), with no state directory")
	_ = c.MarkFlagRequired("output")
	return c
}

func (a *App) runReport(ctx context.Context, out string, fromGit bool) error {
	if strings.TrimSpace(out) == "" {
		return errs.New(errs.Usage, "--output (-o): name the HTML file to write")
	}
	report := a.app.Report
	if fromGit {
		report = a.app.ReportFromGit
	}
	d, err := report(ctx, a.caller())
	if err != nil {
		return err
	}
	d.GeneratedAt, d.Version = a.env.Now().UTC().Format("2006-01-02 15:04:05 UTC"), version()
	var b bytes.Buffer
	if err := renderReport(&b, d); err != nil {
		return errs.New(errs.Unexpected, "report: %v", err)
	}
	path, err := a.writeReport(out, b.Bytes())
	if err != nil {
		return err
	}
	if out == "-" {
		return nil
	}
	return a.emit(map[string]any{"path": path, "bytes": b.Len(), "features": len(d.Stories), "reviews": len(d.Reviews), "events": len(d.Events)}, func(w io.Writer) {
		printf(w, "SUCCESS: wrote %s (%d features, %d reviews, %d events; verify %s)", path, len(d.Stories), len(d.Reviews), len(d.Events), map[bool]string{true: "ok", false: "found problems"}[d.Verify.OK])
	})
}

// writeReport writes the file atomically (or to stdout for -).
func (a *App) writeReport(out string, data []byte) (string, error) {
	if out == "-" {
		_, err := a.env.Stdout.Write(data)
		return "-", err
	}
	path := out
	if !filepath.IsAbs(path) {
		path = filepath.Join(a.env.Cwd, path)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return "", errs.New(errs.Usage, "--output: %s is a directory; name a file such as %s", path, filepath.Join(out, "audit.html"))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", errs.New(errs.Usage, "--output: %v", err)
	}
	if err := app.WriteFile(path, data, 0o644); err != nil {
		return "", errs.New(errs.Unexpected, "--output: %v", err)
	}
	return path, nil
}

func renderReport(w io.Writer, d app.ReportData) error {
	t, err := template.New("report").Funcs(template.FuncMap{
		"who":      app.LogWho,
		"what":     app.LogWhat,
		"dur":      durationText,
		"str":      app.Str,
		"json":     func(v any) string { b, _ := json.MarshalIndent(v, "", "  "); return string(b) },
		"lower":    strings.ToLower,
		"kind":     kindName,
		"verdict":  func(v string) string { return strings.ToLower(strings.ReplaceAll(v, "_", "-")) },
		"sessions": func(st app.Story) []map[string]any { return st.Sessions },
		"get":      func(m map[string]any, k string) string { return app.Str(m[k]) },
		"rec": func(raw json.RawMessage) string {
			return app.RecordText(raw)
		},
		"int64p": func(v any) *int64 { return int64Of(v) },
		"gj":     func(v any, path string) string { return gjson.Get(string(mustJSON(v)), path).String() },
	}).Parse(reportTemplate)
	if err != nil {
		return err
	}
	return t.Execute(w, d)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
