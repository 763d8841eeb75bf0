package gitops

import (
	"slices"
	"testing"
)

func TestWithExcludes(t *testing.T) {
	tests := []struct {
		name, old string
		patterns  []string
		want      string
		added     []string
	}{
		{"empty file", "", []string{"/a", "/b"}, "# c\n/a\n/b\n", []string{"/a", "/b"}},
		{"no final newline", "*.log", []string{"/a"}, "*.log\n# c\n/a\n", []string{"/a"}},
		{"some present", "/a\n", []string{"/a", "/b"}, "/a\n# c\n/b\n", []string{"/b"}},
		{"all present, spaces around", "  /a \n/b\n", []string{"/a", "/b"}, "  /a \n/b\n", nil},
		{"a pattern given twice", "", []string{"/a", "/a"}, "# c\n/a\n", []string{"/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, added := WithExcludes([]byte(tt.old), "# c", tt.patterns)
			if string(got) != tt.want || !slices.Equal(added, tt.added) {
				t.Errorf("WithExcludes = %q, %v; want %q, %v", got, added, tt.want, tt.added)
			}
		})
	}
}
