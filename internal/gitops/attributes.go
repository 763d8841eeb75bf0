package gitops

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// A checkout whose files git converts on the way out — .gitattributes or
// info/attributes asking for line-ending conversion (text, eol, crlf),
// filters (Git LFS's smudge among them), ident or a working-tree encoding —
// is updated by git itself ('git read-tree -m -u', the two-tree form a
// checkout uses), so that the files are what git would write; baton's own
// update writes the blobs as stored. Without git, baton's own update is
// used.

// convertingAttributes are the attributes that make a checked-out file
// differ from its blob.
var convertingAttributes = []string{"text", "eol", "crlf", "filter", "ident", "working-tree-encoding"}

// checkOut moves the checkout from commit old to commit new: through git
// when attributes may convert the files changed, else by baton's update.
func (c *checkout) checkOut(old, new string) error {
	if c.converts(old, new) {
		if _, err := exec.LookPath("git"); err == nil {
			c.unlockIndex() // git takes it: its read-tree checks the index under it
			cmd := exec.Command("git", "read-tree", "-m", "-u", old, new)
			cmd.Dir = c.top
			cmd.Env = cleanGitEnv(os.Environ())
			if err := cmd.Run(); err == nil {
				return nil
			}
		}
	}
	return c.update(old, new)
}

// converts says whether an attributes file that may apply to the files
// changed between old and new asks for a conversion.
func (c *checkout) converts(old, new string) bool {
	changes, err := c.g.commitChanges(old, new)
	if err != nil {
		return false
	}
	files := map[string]bool{filepath.Join(c.gitDir, "info", "attributes"): true}
	if common, err := Locate(c.top); err == nil {
		files[filepath.Join(common.CommonDir, "info", "attributes")] = true
	}
	for _, ch := range changes {
		if path.Base(ch.To.Name) == ".gitattributes" {
			return true // the merge brings attributes the checkout has not got yet
		}
		for _, p := range []string{ch.From.Name, ch.To.Name} {
			for d := path.Dir(p); p != ""; d = path.Dir(d) {
				files[filepath.Join(c.top, filepath.FromSlash(d), ".gitattributes")] = true
				if d == "." || d == "/" {
					break
				}
			}
		}
	}
	for f := range files {
		if b, err := os.ReadFile(f); err == nil && mentionsConversion(string(b)) {
			return true
		}
	}
	return false
}

// hasConvertingAttributes says whether the checkout's top .gitattributes
// or info/attributes asks for a conversion (a rough test: one deeper down
// is not looked for).
func (c *checkout) hasConvertingAttributes() bool {
	for _, f := range []string{filepath.Join(c.top, ".gitattributes"), filepath.Join(c.gitDir, "info", "attributes")} {
		if b, err := os.ReadFile(f); err == nil && mentionsConversion(string(b)) {
			return true
		}
	}
	return false
}

// mentionsConversion says whether attributes text sets any converting
// attribute (a rough reading: a false positive only costs running git).
func mentionsConversion(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line == "" || line[0] == '#' {
			continue
		}
		for _, f := range strings.Fields(line)[1:] {
			f = strings.TrimLeft(f, "-!")
			name, _, _ := strings.Cut(f, "=")
			for _, a := range convertingAttributes {
				if name == a {
					return true
				}
			}
		}
	}
	return false
}

// cleanGitEnv drops the variables that would point a git command at
// another repository or index than the checkout it runs in (set when baton
// runs inside a git hook).
func cleanGitEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX":
			continue
		}
		out = append(out, kv)
	}
	return out
}
