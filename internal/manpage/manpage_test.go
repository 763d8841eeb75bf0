package manpage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func tree() *cobra.Command {
	root := &cobra.Command{Use: "tool", Short: "Do things", Long: "Line one.\n\n  indented\n.starts with a dot\n'quoted \\ back"}
	root.PersistentFlags().String("dir", "", "where")
	sub := &cobra.Command{Use: "sub ID", Short: "A sub", Example: "  tool sub 1\n.x", Run: func(*cobra.Command, []string) {}}
	sub.Flags().StringP("reason", "r", "", "why it fails")
	sub.Flags().Bool("secret", false, "hidden one")
	_ = sub.Flags().MarkHidden("secret")
	hidden := &cobra.Command{Use: "gone", Short: "Hidden", Hidden: true, Run: func(*cobra.Command, []string) {}}
	root.AddCommand(sub, hidden)
	return root
}

func TestWriteTree(t *testing.T) {
	dir := t.TempDir()
	pages, err := WriteTree(tree(), Header{Date: "Jan 2026", Source: "tool 1.0", Manual: "tool manual"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pages {
		names = append(names, filepath.Base(p))
	}
	if got := strings.Join(names, " "); got != "tool-sub.1 tool.1" {
		t.Fatalf("pages %q, want tool-sub.1 tool.1 (hidden commands have none)", got)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	root, sub := read("tool.1"), read("tool-sub.1")
	for _, c := range []struct{ page, want, what string }{
		{root, `.TH "TOOL" "1" "Jan 2026" "tool 1.0" "tool manual"` + "\n", "title line"},
		{root, ".SH NAME\ntool \\- Do things\n", "name"},
		{root, "\\&.starts with a dot\n", "a text line starting with a dot is guarded"},
		{root, "\\&'quoted \\e back\n", "a quote and a backslash are escaped"},
		{root, ".nf\n  indented\n", "an indented line is kept as it is"},
		{root, `\fBtool-sub\fP(1)`, "see also names the sub-command"},
		{sub, ".SH SYNOPSIS\n.B tool sub ID [flags]\n", "synopsis"},
		{sub, `\fB\-r\fP, \fB\-\-reason\fP=""` + "\nwhy it fails\n", "a flag with its shorthand"},
		{sub, ".SH OPTIONS INHERITED FROM PARENT COMMANDS\n", "inherited flags"},
		{sub, ".SH EXAMPLE\n.PP\n.RS\n.nf\n  tool sub 1\n\\&.x\n.fi\n", "example"},
		{sub, `\fBtool\fP(1)`, "see also names the parent"},
	} {
		if !strings.Contains(c.page, c.want) {
			t.Errorf("%s: %q not in\n%s", c.what, c.want, c.page)
		}
	}
	if strings.Contains(sub, "secret") || strings.Contains(root, "gone") {
		t.Errorf("a hidden flag or command is in a page:\n%s\n%s", root, sub)
	}
}
