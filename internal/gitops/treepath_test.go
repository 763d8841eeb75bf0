package gitops

import "testing"

// TestValidTreePath: the paths a checkout refuses to write — parent and
// current directory components, .git in every spelling a file system
// could take for it, control characters — and ordinary ones it writes.
func TestValidTreePath(t *testing.T) {
	for _, p := range []string{"a.txt", "d/e/f.go", ".gitignore", ".github/workflows/ci.yml", "git", "x.git", "gitx", "a\\b.txt", ".gitmodules"} {
		if err := validTreePath(p); err != nil {
			t.Errorf("%q refused: %v", p, err)
		}
	}
	for _, p := range []string{"", "/", "..", "../x", "a/../../b", "./a", ".git", ".git/hooks/pre-commit", ".GIT/config", "d/.Git/x",
		"git~1/config", "GIT~1", ".git.", ".git ", ".git::$INDEX_ALLOCATION", ".g\u200cit", "\u200c.git\u200d", "a\x00b", "a\nb", "a\x7fb", "..\\x"} {
		if err := validTreePath(p); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
}
