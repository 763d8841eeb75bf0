package sandbox

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ReadRoots lists the hierarchies beneath root that together hold
// everything under it except the deny paths: the entries of each directory
// on the way from root to a denied path, other than the one leading there.
// A symbolic link among them is listed only when its target neither holds
// nor lies beneath a denied path (Landlock follows links when a rule is
// added). Paths are cleaned absolute paths; a denied root lists nothing.
func ReadRoots(root string, deny []string) []string {
	return readRoots(root, deny, listDir, filepath.EvalSymlinks)
}

func listDir(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

func readRoots(root string, deny []string, list func(string) ([]string, error), resolve func(string) (string, error)) []string {
	root = filepath.Clean(root)
	var denied []string
	for _, d := range deny {
		if d != "" {
			denied = append(denied, filepath.Clean(d))
		}
	}
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		if isDenied(dir, denied) {
			return
		}
		names, err := list(dir)
		if err != nil {
			return
		}
		sort.Strings(names)
		for _, n := range names {
			p := filepath.Join(dir, n)
			switch {
			case isDenied(p, denied):
			case holdsDenied(p, denied):
				walk(p)
			case linkReaches(p, denied, resolve):
			default:
				out = append(out, p)
			}
		}
	}
	if holdsDenied(root, denied) || isDenied(root, denied) {
		walk(root)
		return out
	}
	return []string{root}
}

// beneath says whether p is dir or lies beneath it.
func beneath(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

func isDenied(p string, denied []string) bool {
	for _, d := range denied {
		if beneath(p, d) {
			return true
		}
	}
	return false
}

// holdsDenied says whether a denied path lies strictly beneath p.
func holdsDenied(p string, denied []string) bool {
	for _, d := range denied {
		if d != p && beneath(d, p) {
			return true
		}
	}
	return false
}

// linkReaches says whether p resolves (as a link, or through one) to a
// place that holds or lies beneath a denied path.
func linkReaches(p string, denied []string, resolve func(string) (string, error)) bool {
	real, err := resolve(p)
	if err != nil {
		return true // a broken or unreadable link: grant nothing through it
	}
	real = filepath.Clean(real)
	if real == p {
		return false
	}
	return isDenied(real, denied) || holdsDenied(real, denied)
}
