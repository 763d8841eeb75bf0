package gitops

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
)

// A path from a tree is checked before a checkout writes it, as git and
// go-git check it: no control character, no empty, "." or ".." component,
// no volume name, and no component a file system could take for .git
// (case-insensitively, HFS+'s ignored code points and NTFS's short name
// and trailing dots and spaces included). The rules follow go-git's
// internal/pathutil (Apache License 2.0).

// errInvalidPath means a tree names a path a checkout must not write.
var errInvalidPath = errors.New("invalid path")

// validTreePath refuses a path a checkout must not write.
func validTreePath(p string) error {
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] == 0x7f {
			return fmt.Errorf("%w %q: contains a control character", errInvalidPath, p)
		}
	}
	parts := strings.FieldsFunc(p, func(r rune) bool { return r == '\\' || r == '/' })
	if len(parts) == 0 || filepath.VolumeName(p) != "" {
		return fmt.Errorf("%w: %q", errInvalidPath, p)
	}
	for _, part := range parts {
		if part == "." || part == ".." {
			return fmt.Errorf("%w %q: cannot use %q", errInvalidPath, p, part)
		}
		if isDotGitName(part) || isHFSDotGit(part) || isNTFSDotGit(part) {
			return fmt.Errorf("%w component: %q", errInvalidPath, p)
		}
	}
	return nil
}

func isDotGitName(name string) bool {
	switch strings.ToLower(name) {
	case ".git", "git~1":
		return true
	}
	return false
}

// hfsIgnored are the code points HFS+ ignores in names.
func hfsIgnored(r rune) bool {
	switch r {
	case 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
		0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f, 0xfeff:
		return true
	}
	return false
}

// isHFSDotGit says whether HFS+ takes part for ".git".
func isHFSDotGit(part string) bool {
	runes := []rune(part)
	i := 0
	skip := func() {
		for i < len(runes) && hfsIgnored(runes[i]) {
			i++
		}
	}
	skip()
	if i >= len(runes) || runes[i] != '.' {
		return false
	}
	i++
	for _, want := range "git" {
		skip()
		if i >= len(runes) || runes[i] > 127 || unicode.ToLower(runes[i]) != want {
			return false
		}
		i++
	}
	skip()
	return i == len(runes)
}

// isNTFSDotGit says whether NTFS takes part for ".git" (or its short name
// git~1), trailing dots and spaces and an alternate data stream included.
func isNTFSDotGit(part string) bool {
	lower := func(c byte) byte {
		if c >= 'A' && c <= 'Z' {
			return c + ('a' - 'A')
		}
		return c
	}
	var i int
	switch {
	case len(part) >= 4 && part[0] == '.' && lower(part[1]) == 'g' && lower(part[2]) == 'i' && lower(part[3]) == 't':
		i = 4
	case len(part) >= 5 && lower(part[0]) == 'g' && lower(part[1]) == 'i' && lower(part[2]) == 't' && part[3] == '~' && part[4] == '1':
		i = 5
	default:
		return false
	}
	for ; i < len(part); i++ {
		if part[i] == ':' {
			return true
		}
		if part[i] != '.' && part[i] != ' ' {
			return false
		}
	}
	return true
}
