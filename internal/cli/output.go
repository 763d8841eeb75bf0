package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// Output rules: stdout carries data only — the predecessor's SUCCESS lines
// and JSON documents, or with --json exactly one JSON document. Warnings,
// errors and NO_MORE_* notices go to stderr; under --json warnings and
// notices go into the document's "warnings" array and an error is one JSON
// object on stderr.

// emit prints a command's result: v as one JSON document under --json,
// otherwise the predecessor's text form.
func (a *App) emit(v any, text func(w io.Writer)) error {
	if a.g.JSON {
		return a.writeJSON(a.env.Stdout, v)
	}
	text(a.env.Stdout)
	return nil
}

// writeJSON prints v as the command's one JSON document. An object gets
// the call's warnings and notices as its "warnings" array (empty when
// there are none), so that nothing but the document reaches stdout.
func (a *App) writeJSON(w io.Writer, v any) error {
	a.emitted = true
	return a.writeFiltered(w, withWarnings(jsondoc.Compact(v), a.warnings))
}

// withWarnings adds "warnings", last, to a JSON object that has none.
func withWarnings(doc []byte, warnings []string) []byte {
	doc = bytes.TrimSpace(doc)
	if len(doc) < 2 || doc[0] != '{' || gjson.GetBytes(doc, "warnings").Exists() {
		return doc
	}
	if warnings == nil {
		warnings = []string{}
	}
	body := bytes.TrimSpace(doc[:len(doc)-1])
	out := append([]byte{}, body...)
	if len(body) > 1 {
		out = append(out, ',')
	}
	out = append(append(out, `"warnings":`...), bytes.TrimSpace(jsondoc.Compact(warnings))...)
	return append(out, '}')
}

// printf writes a line of text output; the values in it are escaped
// (safeText), so that none can break the line or drive the terminal.
func printf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, format+"\n", safeArgs(args)...)
}

// printJSON writes v, indented, as the predecessor's json.dumps(indent=2).
func printJSON(w io.Writer, v any) { fmt.Fprintf(w, "%s\n", jsondoc.Pretty(v)) }

// printRaw writes a stored record, indented as a standalone document.
func printRaw(w io.Writer, raw []byte) { fmt.Fprintf(w, "%s\n", jsondoc.Reindent(raw)) }

// warn writes a WARNING line to stderr; under --json it goes into the
// document's warnings instead.
func (a *App) warn(format string, args ...any) {
	if a.g.JSON {
		a.warnings = append(a.warnings, "WARNING: "+fmt.Sprintf(format, args...))
		return
	}
	if a.view != nil {
		a.view.print(fmt.Sprintf("WARNING: "+format, safeArgs(args)...))
		return
	}
	fmt.Fprintf(a.env.Stderr, "WARNING: "+format+"\n", safeArgs(args)...)
}

// notice writes an informational line to stderr (the predecessor's
// NO_MORE_FEATURES lines go there); under --json it goes into the
// document's warnings instead.
func (a *App) notice(format string, args ...any) {
	if a.g.JSON {
		a.warnings = append(a.warnings, fmt.Sprintf(format, args...))
		return
	}
	if a.view != nil {
		a.view.print(fmt.Sprintf(format, safeArgs(args)...))
		return
	}
	fmt.Fprintf(a.env.Stderr, format+"\n", safeArgs(args)...)
}

// Warnf, Noticef and Messages make the command line the application's
// sink: its warnings go where warn, notice and messages send them.
func (a *App) Warnf(format string, args ...any)   { a.warn(format, args...) }
func (a *App) Noticef(format string, args ...any) { a.notice(format, args...) }
func (a *App) Messages() io.Writer                { return a.messages() }

// messages is where a helper writes its warning lines: stderr, or under
// --json the document's warnings.
func (a *App) messages() io.Writer {
	if !a.g.JSON {
		return safeWriter{a.env.Stderr}
	}
	return lineWriter(func(l string) { a.warnings = append(a.warnings, l) })
}

// lineWriter hands each non-empty line written to it to fn.
type lineWriter func(string)

func (fn lineWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(string(p), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			fn(l)
		}
	}
	return len(p), nil
}

type jsonError struct {
	Error struct {
		Kind    string `json:"kind"`
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Details  any      `json:"details,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// detailedError is an error whose JSON object carries a document about it
// (get-fix-count at the limit: the counts).
type detailedError struct {
	error
	details any
}

func (e detailedError) Unwrap() error { return e.error }

func withDetails(err error, details any) error { return detailedError{err, details} }

func (a *App) reportError(err error) {
	if a.reportCheckpoint(err) {
		fmt.Fprintf(a.env.Stderr, "CHECKPOINT: %s\n", safeMessage(err.Error()))
		return
	}
	if a.g.JSON {
		var je jsonError
		je.Error.Kind = errs.KindOf(err).String()
		je.Error.Code = errs.Code(err)
		je.Error.Message = err.Error()
		je.Warnings = a.warnings
		var de detailedError
		if errors.As(err, &de) {
			je.Details = de.details
		}
		fmt.Fprintf(a.env.Stderr, "%s\n", bytes.TrimSpace(jsondoc.Compact(je)))
		return
	}
	if errs.Is(err, errs.NeedAgent) { // a checkpoint, not a failure
		fmt.Fprintf(a.env.Stderr, "CHECKPOINT: %s\n", safeMessage(err.Error()))
		return
	}
	fmt.Fprintf(a.env.Stderr, "ERROR: %s\n", safeMessage(err.Error()))
}

// fieldValue is a --field result as the predecessor prints it: strings raw,
// null or missing as an empty line, objects and arrays as indented JSON.
func fieldValue(r gjson.Result) []byte {
	switch {
	case !r.Exists() || r.Type == gjson.Null:
		return nil
	case r.Type == gjson.String:
		return []byte(safeText(r.Str)) // one line, whatever the value holds
	case r.IsObject() || r.IsArray():
		return jsondoc.Reindent([]byte(r.Raw))
	}
	return []byte(r.Raw)
}

// recordField prints one field of a record (--field PATH). Under --json
// a path whose first key is neither in the record nor a field records of
// its kind have (see 'baton schema') is a mistake: exit 4, naming the
// fields there are, as get-status does in both forms; a known field the
// record lacks prints null. The text form keeps the predecessor's empty
// line for any missing path (get-status: exit 4).
func (a *App) recordField(rec gjson.Result, field string, kinds ...string) error {
	v := rec.Get(field)
	top := topKey(field)
	switch {
	case v.Exists():
		return a.emitField(v)
	case kinds[0] == "status": // get-status: any missing path is not found
	case rec.Get(gjsonEscape(top)).Exists() || !a.g.JSON:
		return a.emitField(v)
	}
	for _, k := range kinds {
		if p, ok := defs[k].(schema)["properties"].(schema); ok && p[top] != nil && k != "status" {
			return a.emitField(v)
		}
	}
	var keys []string
	rec.ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.Str); return true })
	return errs.New(errs.NotFound, "Unknown field '%s'. Available fields: %s", field, strings.Join(keys, ", "))
}

// topKey is the first key of a gjson path.
func topKey(path string) string {
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '\\':
			i++
		case '.', '|':
			return strings.ReplaceAll(path[:i], "\\", "")
		}
	}
	return strings.ReplaceAll(path, "\\", "")
}

func gjsonEscape(key string) string {
	r := strings.NewReplacer(".", "\\.", "*", "\\*", "?", "\\?", "|", "\\|", "#", "\\#", "@", "\\@")
	return r.Replace(key)
}

// emitField prints a --field result: the raw value, or under --json the JSON
// value itself (null when missing).
func (a *App) emitField(r gjson.Result) error {
	if a.g.JSON {
		if !r.Exists() {
			return a.writeFiltered(a.env.Stdout, []byte("null"))
		}
		return a.writeFiltered(a.env.Stdout, []byte(r.Raw))
	}
	_, err := fmt.Fprintf(a.env.Stdout, "%s\n", fieldValue(r))
	return err
}

// jsonHelp makes the text cobra prints itself — help, the version, a
// completion script, baton with no command — one JSON document under
// --json.
func (a *App) jsonHelp(root *cobra.Command) {
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if !a.g.JSON {
			help(c, args)
			return
		}
		var b bytes.Buffer
		c.SetOut(&b)
		help(c, args)
		c.SetOut(a.env.Stdout)
		_ = a.writeJSON(a.env.Stdout, map[string]string{"command": c.CommandPath(), "help": b.String()})
	})
	root.RunE = func(c *cobra.Command, args []string) error {
		if a.g.JSON {
			return errs.New(errs.Usage, "baton needs a command (see 'baton --help')")
		}
		return c.Help()
	}
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			strictHelp(c)
		}
		if c.Name() != "completion" {
			continue
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return errs.New(errs.Usage, "completion: no shell %q (bash, zsh, fish or powershell)", args[0])
			}
			return c.Help()
		}
		for _, sh := range c.Commands() {
			run := sh.RunE
			sh.RunE = func(c *cobra.Command, args []string) error {
				if !a.g.JSON {
					return run(c, args)
				}
				var b bytes.Buffer
				if err := completionScript(c.Root(), c.Name(), &b); err != nil {
					return err
				}
				return a.writeJSON(a.env.Stdout, map[string]string{"shell": c.Name(), "script": b.String()})
			}
		}
	}
}

func completionScript(root *cobra.Command, shell string, w io.Writer) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(w, true)
	case "zsh":
		return root.GenZshCompletion(w)
	case "fish":
		return root.GenFishCompletion(w, true)
	case "powershell":
		return root.GenPowerShellCompletionWithDesc(w)
	}
	return errs.New(errs.Usage, "no completion for the shell %q", shell)
}

// strictHelp makes 'baton help TOPIC' a usage error when TOPIC is no
// command (cobra prints its usage and exits 0).
func strictHelp(help *cobra.Command) {
	run := help.Run
	help.Run = nil
	help.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			if found, rest, err := c.Root().Find(args); err != nil || found == nil || len(rest) > 0 {
				return errs.New(errs.Usage, "help: no command %q (see 'baton --help')", strings.Join(args, " "))
			}
		}
		run(c, args)
		return nil
	}
}
