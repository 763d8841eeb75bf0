package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// Terminal safety. Stored strings (summaries, names, branch names, ids
// read from a file edited by hand) and the ids a caller typed reach the
// terminal in text output and messages. A control character there could
// move the cursor, recolour or retitle the terminal (ESC, BEL), and a line
// break could forge a line that reads as baton's own (SUCCESS:, FEATURE:,
// NEXT:). So every value printed in a text line is escaped (safeText), a
// message's continuation lines are indented, and ids and names given on the
// command line may not contain control characters at all (checkArgText).
// JSON output needs nothing: encoding escapes every control character.

var unsafeRune = jsondoc.UnsafeRune

// safeText escapes every unsafe rune of s (jsondoc.SafeText).
var safeText = jsondoc.SafeText

// safeArgs escapes the strings among a text line's arguments.
func safeArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = safeText(v)
		case *string:
			if v != nil {
				out[i] = safeText(*v)
			} else {
				out[i] = v
			}
		case []string:
			s := make([]string, len(v))
			for j, x := range v {
				s[j] = safeText(x)
			}
			out[i] = s
		case error:
			out[i] = safeText(v.Error())
		default:
			out[i] = a
		}
	}
	return out
}

// safeMessage makes a message safe for the terminal: control characters
// escaped, each line after the first indented (jsondoc.SafeMessage).
var safeMessage = jsondoc.SafeMessage

// checkArgText refuses an id or name given on the command line that holds a
// control character (a line break, ESC): it could never be shown safely,
// and no id or branch baton writes contains one.
func checkArgText(what, v string) error {
	if i := strings.IndexFunc(v, unsafeRune); i >= 0 {
		return errs.New(errs.Usage, "%s: %s contains a control character at byte %d: ids, names and branch names may not contain line breaks, escape sequences or other control characters", what, fmt.Sprintf("%+q", v), i)
	}
	return nil
}

// safeWriter escapes what a helper writes to the terminal, keeping its
// line breaks and tabs.
type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	lines := strings.Split(string(p), "\n")
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(safeText(l), `\t`, "\t")
	}
	if _, err := io.WriteString(s.w, strings.Join(lines, "\n")); err != nil {
		return 0, err
	}
	return len(p), nil
}

// textFlags are the flags whose values are free text (a summary, a reason,
// JSON): line breaks are allowed there, and escaped when shown.
var textFlags = map[string]bool{"summary": true, "reason": true, "issues": true, "entries": true, "metrics": true,
	"commits": true, "message": true, "failure-reason": true, "issues-fixed": true, "issues-deferred": true,
	"tests-added": true, "description": true, "response": true, "prompt": true, "context": true,
	"agent-cmd": true, "error-message": true, "failure": true, "metadata": true, "input": true, "config": true}

// checkInputText refuses a positional argument or an id-like flag value
// with a control character, before the command runs.
func checkInputText(c *cobra.Command, args []string) error {
	for i, v := range args {
		if err := checkArgText(fmt.Sprintf("argument %d", i+1), v); err != nil {
			return err
		}
	}
	var err error
	c.Flags().Visit(func(f *pflag.Flag) {
		if err == nil && !textFlags[f.Name] && f.Value.Type() == "string" {
			err = checkArgText("--"+f.Name, f.Value.String())
		}
	})
	return err
}
