package jsondoc

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// UnsafeRune reports a rune that must not reach a terminal as is: C0 and C1
// controls (line breaks, ESC, BEL), DEL, the line and paragraph separators,
// the bidi controls that reorder what is shown, and invalid UTF-8.
func UnsafeRune(r rune) bool {
	switch {
	case r == utf8.RuneError, unicode.IsControl(r):
		return true
	case r == '\u2028' || r == '\u2029':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
		return true
	}
	return false
}

// ControlAt returns the byte index of the first unsafe rune of s (see
// UnsafeRune), or -1: ids and names must have none.
func ControlAt(s string) int { return strings.IndexFunc(s, UnsafeRune) }

// SafeText escapes every unsafe rune of s as Go would quote it (\n, \x1b,
// \u202e), so that s prints as one inert line.
func SafeText(s string) string {
	if strings.IndexFunc(s, UnsafeRune) < 0 {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if !UnsafeRune(r) {
			b.WriteRune(r)
			continue
		}
		if r == utf8.RuneError {
			fmt.Fprintf(&b, `\x%02x`, s[i])
			continue
		}
		q := strings.Trim(fmt.Sprintf("%+q", string(r)), `"`)
		b.WriteString(q)
	}
	return b.String()
}

// SafeMessage makes a message (an error, a warning) safe to show: control
// characters are escaped, and each line after the first is indented, so
// that no line of it can read as one of baton's own. The CLI prints errors
// so, and the MCP server returns them so.
func SafeMessage(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = SafeText(l)
		if i > 0 {
			lines[i] = "  " + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}
