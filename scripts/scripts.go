// Package scripts embeds the drop-in progress.py, reviews.py and features.py
// that hand a predecessor-style call to baton, and installs them into a
// project.
package scripts

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
)

//go:embed *.py
var files embed.FS

// Names lists the scripts, as installed.
var Names = []string{"progress.py", "reviews.py", "features.py"}

// Install writes the scripts into dir (created if needed), executable, and
// returns their paths. Existing files are replaced.
func Install(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for _, n := range Names {
		b, err := files.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("embedded %s: %w", n, err)
		}
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, b, 0o755); err != nil {
			return nil, err
		}
		if err := os.Chmod(p, 0o755); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
