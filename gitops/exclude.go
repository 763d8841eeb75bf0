package gitops

import "strings"

// WithExcludes returns the text of an info/exclude file that held old with
// the patterns it lacks appended under a comment line, and the patterns
// added (none: old is returned as it was).
func WithExcludes(old []byte, comment string, patterns []string) ([]byte, []string) {
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add []string
	for _, p := range patterns {
		if !have[p] {
			add = append(add, p)
			have[p] = true
		}
	}
	if len(add) == 0 {
		return old, nil
	}
	text := string(old)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text += comment + "\n" + strings.Join(add, "\n") + "\n"
	return []byte(text), add
}
