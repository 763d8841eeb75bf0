package cmd

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/features"
	"github.com/baton-cli/baton/reviews"
	"github.com/baton-cli/baton/store"
)

//go:embed report.html.tmpl
var reportTemplate string

// reportData is everything the audit report shows.
type reportData struct {
	Project     string
	StateDir    string
	GeneratedAt string
	Version     string
	Status      statusResult
	Verify      verifyResult
	VerifyError string
	Stories     []story
	Reviews     []reportReview
	Fixes       []map[string]any
	Merges      []storyMerge
	Events      []logLine
	Refused     []logLine
}

// reportReview is one review cycle: the review, its issues and what
// answered them, and the decision it led to.
type reportReview struct {
	ID       int
	Verdict  string
	Agent    string
	Features string
	Branch   string
	Range    string
	Summary  string
	Time     string
	Decision map[string]any
	Issues   []storyIssue
	Merge    string
	Rejected string
}

func (a *App) newReportCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "report -o FILE.html",
		Short: "Write the audit report: one self-contained HTML file to share with someone who does not run baton",
		Long: `Write one self-contained HTML file (no network, no external files) telling what the agents did:
the project's timeline, each feature's, bug's and debt item's story, the review cycles with their
issues and the fixes that answered them, the fix-cycle decisions, the commits and merges, the
refused attempts, and the result of 'baton verify'. Keys in the report: j/k next/previous
section, g top, / filter the timeline, ? help. It prints cleanly (every section expanded).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runReport(c.Context(), out) },
	}
	c.Flags().StringVarP(&out, "output", "o", "", "the HTML file to write (required; - for stdout)")
	_ = c.MarkFlagRequired("output")
	return c
}

func (a *App) runReport(ctx context.Context, out string) error {
	if strings.TrimSpace(out) == "" {
		return errs.New(errs.Usage, "--output (-o): name the HTML file to write")
	}
	var d reportData
	if err := a.snapshot(ctx, func(sn *snapshot) error {
		if sn.prog == nil {
			return firstProblemOr(sn, missing(sn.s, "progress.json", progressHint))
		}
		var err error
		d, err = sn.reportData()
		return err
	}); err != nil {
		return err
	}
	d.GeneratedAt, d.Version = a.env.Now().UTC().Format("2006-01-02 15:04:05 UTC"), version()
	d.Verify, d.VerifyError = a.reportVerify(ctx)
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
		path = filepath.Join(a.fileDir(), path)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return "", errs.New(errs.Usage, "--output: %s is a directory; name a file such as %s", path, filepath.Join(out, "audit.html"))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", errs.New(errs.Usage, "--output: %v", err)
	}
	if err := store.WriteFileAtomic(path, data, 0o644); err != nil {
		return "", errs.New(errs.Unexpected, "--output: %v", err)
	}
	return path, nil
}

// reportVerify runs verify as its own command and reads its document.
func (a *App) reportVerify(ctx context.Context) (verifyResult, string) {
	var res verifyResult
	out, err := a.sub(ctx, nil, "--json", "verify")
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		if err == nil {
			err = jerr
		}
		return verifyResult{Problems: []problem{}}, err.Error()
	}
	return res, ""
}

// reportData gathers the stories, review cycles and timeline.
func (sn *snapshot) reportData() (reportData, error) {
	lines, err := readLog(sn.s)
	if err != nil {
		return reportData{}, err
	}
	d := reportData{StateDir: sn.s.Dir, Status: sn.status(), Events: lines, Refused: []logLine{}}
	d.Project = d.Status.Project
	for _, l := range lines {
		if l.Refused != "" {
			d.Refused = append(d.Refused, l)
		}
	}
	if sn.feat != nil {
		for _, it := range sn.feat.All() {
			st, err := sn.story(it.ID, lines)
			if err != nil {
				return d, err
			}
			d.Stories = append(d.Stories, st)
		}
	}
	if sn.rev != nil {
		d.Reviews, d.Merges = reviewCycles(sn.rev)
		for _, x := range sn.rev.Fixes() {
			m, _ := x.Value().(map[string]any)
			d.Fixes = append(d.Fixes, m)
		}
	}
	return d, nil
}

// reviewCycles lists every review with its issues, what answered each,
// and its decision; and the merges.
func reviewCycles(rv *reviews.File) ([]reportReview, []storyMerge) {
	var out []reportReview
	var merges []storyMerge
	for _, r := range rv.Reviews() {
		id := int(r.Get("review_id").Int())
		st := story{}
		for _, is := range reviews.ReadIssues(r.Get("issues")) {
			st.Issues = append(st.Issues, storyIssue{ID: is.ID, ReviewID: id, Severity: is.Severity, Description: is.Description, Location: is.Location, Status: "open"})
		}
		for _, x := range rv.Fixes() {
			if int(x.Get("review_id").Int()) == id {
				st.answer(x)
			}
		}
		dec, _ := r.Get("decision").Value().(map[string]any)
		rr := reportReview{ID: id, Verdict: reviews.VerdictOf(r), Agent: r.Get("agent_type").String(), Features: strings.Join(features.SplitIDs(r.Get("feature_id").String()), ", "),
			Branch: r.Get("branch").String(), Summary: r.Get("summary").String(), Time: r.Get("timestamp").String(), Decision: dec, Issues: st.Issues,
			Rejected: r.Get("rejected_at").String()}
		if cr := r.Get("commit_range"); cr.Exists() {
			rr.Range = cr.Get("from").String() + ".." + cr.Get("to").String()
		}
		if mc := r.Get("merge_commit").String(); mc != "" {
			rr.Merge = mc
			merges = append(merges, storyMerge{id, rr.Verdict, rr.Branch, mc, r.Get("merged_onto").String(), r.Get("merged_at").String()})
		}
		out = append(out, rr)
	}
	return out, merges
}

func renderReport(w io.Writer, d reportData) error {
	t, err := template.New("report").Funcs(template.FuncMap{
		"who":      logWho,
		"what":     logWhat,
		"dur":      durationText,
		"str":      str,
		"json":     func(v any) string { b, _ := json.MarshalIndent(v, "", "  "); return string(b) },
		"lower":    strings.ToLower,
		"kind":     kindName,
		"verdict":  func(v string) string { return strings.ToLower(strings.ReplaceAll(v, "_", "-")) },
		"sessions": func(st story) []map[string]any { return st.Sessions },
		"get":      func(m map[string]any, k string) string { return str(m[k]) },
		"rec": func(raw json.RawMessage) string {
			return recordText(raw)
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

// logWho is who made an event: ROLE#session, or -.
func logWho(l logLine) string {
	if l.Actor == nil {
		return "-"
	}
	if l.Actor.Session != nil {
		return fmt.Sprintf("%s#%d", l.Actor.Role, *l.Actor.Session)
	}
	return l.Actor.Role
}

// logWhat is what an event did, as the log's text says it.
func logWhat(l logLine) string {
	what := l.Summary
	if l.Refused != "" {
		what = "REFUSED: " + l.Refused
	} else if what == "" {
		what = "changed " + strings.Join(l.Changed, ", ")
	}
	if d := recordText(l.Record); d != "" {
		what += " — " + d
	}
	return what
}
