package jsondoc

import (
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
