package cli

import (
	"strings"
	"testing"
)

func TestSafeText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, café", "plain text, café"},
		{"a\nb", `a\nb`},
		{"\x1b[31mred", `\x1b[31mred`},
		{"bell\a", `bell\a`},
		{"cr\rSUCCESS: x", `cr\rSUCCESS: x`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085next", `c1\u0085next`},
		{"rtl\u202eevil", `rtl\u202eevil`},
		{"sep\u2028x", `sep\u2028x`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"tab\there", `tab\there`},
	}
	for _, tt := range tests {
		got := safeText(tt.in)
		if got != tt.want {
			t.Errorf("safeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.IndexFunc(got, unsafeRune) >= 0 {
			t.Errorf("safeText(%q) = %q still holds a control character", tt.in, got)
		}
	}
	if m := safeMessage("first\nSUCCESS: forged\x1b"); m != "first\n  SUCCESS: forged\\x1b" {
		t.Errorf("safeMessage = %q", m)
	}
}
