package gitops_test

import (
	"slices"
	"testing"

	"github.com/baton-cli/baton/gitops"
)

func TestTrailers(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		want      []string
	}{
		{"baton's merge", "Merge branch 'feature/a' into main (F001)\n\nBaton-Review: R1\nBaton-Feature: F001\nBaton-Log: seq 9 abc\n", []string{"seq 9 abc"}},
		{"key case and spaces", "s\n\nbaton-log:   seq 1 x  \n", []string{"seq 1 x"}},
		{"only the last paragraph", "s\n\nBaton-Log: seq 1 old\n\nbody\n", nil},
		{"a subject alone", "Baton-Log: seq 1 x", nil},
		{"two values", "s\n\nBaton-Log: a\nBaton-Log: b", []string{"a", "b"}},
		{"none", "s\n\nSigned-off-by: x\n", nil},
	} {
		if got := gitops.Trailers(tc.msg, "Baton-Log"); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Trailers = %q, want %q", tc.name, got, tc.want)
		}
	}
}
