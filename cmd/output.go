package cmd

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/jsondoc"
)

// Output rules: stdout carries data only — the predecessor's SUCCESS lines
// and JSON documents, or with --json exactly one JSON document. Warnings,
// errors and NO_MORE_* notices go to stderr.

// emit prints a command's result: v as one JSON document under --json,
// otherwise the predecessor's text form.
func (a *App) emit(v any, text func(w io.Writer)) error {
	if a.g.JSON {
		return a.writeJSON(a.env.Stdout, v)
	}
	text(a.env.Stdout)
	return nil
}

func (a *App) writeJSON(w io.Writer, v any) error {
	_, err := fmt.Fprintf(w, "%s\n", jsondoc.Pretty(v))
	return err
}

// printf writes a line of text output.
func printf(w io.Writer, format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }

// printJSON writes v, indented, as the predecessor's json.dumps(indent=2).
func printJSON(w io.Writer, v any) { fmt.Fprintf(w, "%s\n", jsondoc.Pretty(v)) }

// printRaw writes a stored record, indented as a standalone document.
func printRaw(w io.Writer, raw []byte) { fmt.Fprintf(w, "%s\n", jsondoc.Reindent(raw)) }

// warn writes a WARNING line to stderr.
func (a *App) warn(format string, args ...any) {
	fmt.Fprintf(a.env.Stderr, "WARNING: "+format+"\n", args...)
}

// notice writes an informational line to stderr (the predecessor's
// NO_MORE_FEATURES lines go there).
func (a *App) notice(format string, args ...any) {
	fmt.Fprintf(a.env.Stderr, format+"\n", args...)
}

type jsonError struct {
	Error struct {
		Kind    string `json:"kind"`
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (a *App) reportError(err error) {
	if a.reportCheckpoint(err) {
		fmt.Fprintf(a.env.Stderr, "CHECKPOINT: %s\n", err.Error())
		return
	}
	if a.g.JSON {
		var je jsonError
		je.Error.Kind = errs.KindOf(err).String()
		je.Error.Code = errs.Code(err)
		je.Error.Message = err.Error()
		b, _ := json.Marshal(je)
		fmt.Fprintf(a.env.Stderr, "%s\n", b)
		return
	}
	if errs.Is(err, errs.NeedAgent) { // a checkpoint, not a failure
		fmt.Fprintf(a.env.Stderr, "CHECKPOINT: %s\n", err.Error())
		return
	}
	fmt.Fprintf(a.env.Stderr, "ERROR: %s\n", err.Error())
}

// fieldValue is a --field result as the predecessor prints it: strings raw,
// null or missing as an empty line, objects and arrays as indented JSON.
func fieldValue(r gjson.Result) []byte {
	switch {
	case !r.Exists() || r.Type == gjson.Null:
		return nil
	case r.Type == gjson.String:
		return []byte(r.Str)
	case r.IsObject() || r.IsArray():
		return jsondoc.Reindent([]byte(r.Raw))
	}
	return []byte(r.Raw)
}

// emitField prints a --field result: the raw value, or under --json the JSON
// value itself (null when missing).
func (a *App) emitField(r gjson.Result) error {
	if a.g.JSON {
		if !r.Exists() {
			_, err := fmt.Fprintln(a.env.Stdout, "null")
			return err
		}
		_, err := fmt.Fprintf(a.env.Stdout, "%s\n", jsondoc.Reindent([]byte(r.Raw)))
		return err
	}
	_, err := fmt.Fprintf(a.env.Stdout, "%s\n", fieldValue(r))
	return err
}
