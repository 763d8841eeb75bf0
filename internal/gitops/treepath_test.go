package gitops

import (
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

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

// TestCommitEncodingRoundTrip: a commit baton writes decodes to what it
// wrote — tree, parents, both signatures with their time zone, a message
// of several lines — and a header spanning lines (a signature) is passed
// over.
func TestCommitEncodingRoundTrip(t *testing.T) {
	when := time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("", -(3*3600+30*60)))
	c := &commit{TreeHash: plumbing.NewHash(strings.Repeat("ab", 20)),
		ParentHashes: []plumbing.Hash{plumbing.NewHash(strings.Repeat("01", 20)), plumbing.NewHash(strings.Repeat("02", 20))},
		Author:       Signature{Name: "A Person", Email: "a@example.test", When: when},
		Committer:    Signature{Name: "baton", Email: "baton@localhost", When: when.UTC()},
		Message:      "Merge feature/x\n\nBaton-Log: 12\n"}
	raw := c.encode()
	signed := strings.Replace(string(raw), "\n\n", "\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n\n", 1)
	for _, text := range []string{string(raw), signed} {
		o := &plumbing.MemoryObject{}
		o.SetType(plumbing.CommitObject)
		if _, err := o.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
		got, err := decodeCommit(o)
		if err != nil {
			t.Fatal(err)
		}
		if got.TreeHash != c.TreeHash || len(got.ParentHashes) != 2 || got.ParentHashes[1] != c.ParentHashes[1] || got.Message != c.Message ||
			got.Author.Name != "A Person" || got.Author.Email != "a@example.test" || !got.Author.When.Equal(when) ||
			got.Author.When.Format("-0700") != "-0330" || !got.Committer.When.Equal(when) {
			t.Errorf("decoded %+v\nfrom %q", got, text)
		}
	}
	o := &plumbing.MemoryObject{}
	o.SetType(plumbing.CommitObject)
	_, _ = o.Write([]byte("author x <y> 1 +0000\n\nno tree\n"))
	if _, err := decodeCommit(o); err == nil {
		t.Error("a commit without a tree decoded")
	}
}
