// Package scripts embeds the drop-in progress.py, reviews.py and features.py
// that hand a predecessor-style call to baton, and installs them into a
// project.
package scripts

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

//go:embed *.py
var files embed.FS

// Names lists the scripts, as installed.
var Names = []string{"progress.py", "reviews.py", "features.py", "verification.py"}

// BackupSuffix is added to the name of whatever Install found in its way.
const BackupSuffix = ".predecessor"

// Moved is something Install found in its way and kept under another name.
type Moved struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Install writes the scripts into dir (created if needed), executable, and
// returns their paths. It never overwrites what is there: a script with
// other content (the predecessor's own, a symbolic link to it) is renamed
// to NAME.predecessor first, and a dir that is a symbolic link (the
// predecessor's launcher links its own scripts/ into the project) is
// renamed the same way, so nothing is written through it. A script
// already identical to baton's is left as it is.
func Install(dir string) ([]string, []Moved, error) {
	var moved []Moved
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		to, err := moveAside(dir)
		if err != nil {
			return nil, nil, err
		}
		moved = append(moved, Moved{From: dir, To: to})
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, moved, err
	}
	var out []string
	for _, n := range Names {
		b, err := files.ReadFile(n)
		if err != nil {
			return out, moved, fmt.Errorf("embedded %s: %w", n, err)
		}
		p := filepath.Join(dir, n)
		m, err := install(p, b)
		if err != nil {
			return out, moved, err
		}
		if m != nil {
			moved = append(moved, *m)
		}
		out = append(out, p)
	}
	return out, moved, nil
}

// install puts one script at p, moving aside anything else found there.
func install(p string, b []byte) (*Moved, error) {
	var moved *Moved
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case fi.Mode().IsRegular() && same(p, b):
		return nil, os.Chmod(p, 0o755)
	default:
		to, err := moveAside(p)
		if err != nil {
			return nil, err
		}
		moved = &Moved{From: p, To: to}
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*.tmp")
	if err != nil {
		return moved, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return moved, err
	}
	if err := tmp.Close(); err != nil {
		return moved, err
	}
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		return moved, err
	}
	return moved, os.Rename(tmp.Name(), p)
}

func same(p string, b []byte) bool {
	have, err := os.ReadFile(p)
	return err == nil && bytes.Equal(have, b)
}

// moveAside renames p (a file, a directory or a link: never followed) to
// p.predecessor, or p.predecessor.N when that is taken, and returns the
// new name.
func moveAside(p string) (string, error) {
	for i := 1; i < 1000; i++ {
		to := p + BackupSuffix
		if i > 1 {
			to += "." + strconv.Itoa(i)
		}
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			return to, os.Rename(p, to)
		}
	}
	return "", fmt.Errorf("%s: every backup name up to %s%s.999 is taken", p, p, BackupSuffix)
}

// Foreign lists the scripts in dir that are not baton's (another tool's,
// such as the predecessor's own, or a link to them).
func Foreign(dir string) []string {
	var out []string
	for _, n := range Names {
		p := filepath.Join(dir, n)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		b, _ := files.ReadFile(n)
		if !fi.Mode().IsRegular() || !same(p, b) {
			out = append(out, p)
		}
	}
	return out
}
