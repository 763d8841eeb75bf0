// Package manpage writes a roff man page for every command of a cobra
// command tree: name, synopsis, description, options, example and the pages
// to see also. cobra's own generator (github.com/spf13/cobra/doc) renders
// help text as Markdown through go-md2man, which refills the indented lines
// baton's help uses for tables, such as the exit codes, into one paragraph;
// this writer keeps them as they are.
package manpage

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Header is the title line every page carries (.TH).
type Header struct {
	Section string // "1" when empty
	Date    string // as printed, e.g. "Nov 2026"; may be empty
	Source  string // e.g. "baton v1.2.3"
	Manual  string // e.g. "baton manual"
}

// WriteTree writes a page for root and each of its available commands into
// dir, named by the command path joined with "-" (baton-status.1), and
// returns the paths written.
func WriteTree(root *cobra.Command, h Header, dir string) ([]string, error) {
	if h.Section == "" {
		h.Section = "1"
	}
	var out []string
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		for _, sub := range c.Commands() {
			if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
				continue
			}
			if err := walk(sub); err != nil {
				return err
			}
		}
		path := filepath.Join(dir, dashed(c)+"."+h.Section)
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		err = Write(f, c, h)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		out = append(out, path)
		return err
	}
	return out, walk(root)
}

func dashed(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }

// Write writes c's page to w.
func Write(w io.Writer, c *cobra.Command, h Header) error {
	if h.Section == "" {
		h.Section = "1"
	}
	c.InitDefaultHelpFlag()
	var b strings.Builder
	title := strings.ToUpper(dashed(c))
	fmt.Fprintf(&b, ".TH %s %s %s %s %s\n", quote(title), quote(h.Section), quote(h.Date), quote(h.Source), quote(h.Manual))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", escape(dashed(c)), escape(c.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n", escape(c.UseLine()))
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	b.WriteString(".SH DESCRIPTION\n")
	paragraphs(&b, desc)
	options(&b, "OPTIONS", c.NonInheritedFlags())
	options(&b, "OPTIONS INHERITED FROM PARENT COMMANDS", c.InheritedFlags())
	if c.Example != "" {
		b.WriteString(".SH EXAMPLE\n.PP\n.RS\n.nf\n")
		for _, l := range strings.Split(c.Example, "\n") {
			b.WriteString(line(l) + "\n")
		}
		b.WriteString(".fi\n.RE\n")
	}
	seeAlso(&b, c, h.Section)
	_, err := io.WriteString(w, b.String())
	return err
}

// paragraphs writes text as filled paragraphs, keeping each blank-line
// separated block together and its indented lines as they are.
func paragraphs(b *strings.Builder, text string) {
	for _, para := range strings.Split(strings.TrimSpace(text), "\n\n") {
		b.WriteString(".PP\n")
		verbatim := false
		for _, l := range strings.Split(para, "\n") {
			indented := strings.HasPrefix(l, " ")
			if indented && !verbatim {
				b.WriteString(".nf\n")
			} else if !indented && verbatim {
				b.WriteString(".fi\n")
			}
			verbatim = indented
			b.WriteString(line(l) + "\n")
		}
		if verbatim {
			b.WriteString(".fi\n")
		}
	}
}

func options(b *strings.Builder, title string, flags *pflag.FlagSet) {
	if !flags.HasAvailableFlags() {
		return
	}
	b.WriteString(".SH " + title + "\n")
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		name := "\\fB\\-\\-" + escape(f.Name) + "\\fP"
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			name = "\\fB\\-" + escape(f.Shorthand) + "\\fP, " + name
		}
		def := f.DefValue
		if f.Value.Type() == "string" {
			def = fmt.Sprintf("%q", def)
		}
		if f.NoOptDefVal != "" {
			name += "[=" + escape(def) + "]"
		} else {
			name += "=" + escape(def)
		}
		fmt.Fprintf(b, ".TP\n%s\n%s\n", name, line(f.Usage))
	})
}

func seeAlso(b *strings.Builder, c *cobra.Command, section string) {
	var refs []string
	if c.HasParent() {
		refs = append(refs, fmt.Sprintf("\\fB%s\\fP(%s)", escape(dashed(c.Parent())), section))
	}
	children := append([]*cobra.Command(nil), c.Commands()...)
	sort.Slice(children, func(i, j int) bool { return children[i].Name() < children[j].Name() })
	for _, sub := range children {
		if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
			refs = append(refs, fmt.Sprintf("\\fB%s\\fP(%s)", escape(dashed(sub)), section))
		}
	}
	if len(refs) > 0 {
		b.WriteString(".SH SEE ALSO\n" + strings.Join(refs, ", ") + "\n")
	}
}

// escape makes text safe inside a roff line (its backslashes). Hyphens stay
// as they are: the pages are read on screen, and searched for flag names.
func escape(s string) string { return strings.ReplaceAll(s, `\`, `\e`) }

// line is escape for a whole output line: one starting with a control
// character ('.' or '\”) is guarded so roff prints it.
func line(s string) string {
	s = escape(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

func quote(s string) string { return `"` + strings.ReplaceAll(escape(s), `"`, `\(dq`) + `"` }
