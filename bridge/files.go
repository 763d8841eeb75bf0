package bridge

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/baton-cli/baton/internal/store"
)

// Paths are the bridge's files in one state directory.
type Paths struct {
	Dir        string // the state directory
	Request    string // .agent-request.json
	Response   string // .agent-response.json
	Store      string // .baton/bridge: the checkpoint, consumed responses, large prompts
	Checkpoint string // .baton/bridge/checkpoint.json
}

// PathsIn returns the bridge's paths in the state directory dir (absolute).
func PathsIn(dir string) Paths {
	st := filepath.Join(dir, ".baton", "bridge")
	return Paths{
		Dir:        dir,
		Request:    filepath.Join(dir, RequestFile),
		Response:   filepath.Join(dir, ResponseFile),
		Store:      st,
		Checkpoint: filepath.Join(st, "checkpoint.json"),
	}
}

// runDir holds one run's consumed responses and side-file prompts.
func (p Paths) runDir(runID string) string { return filepath.Join(p.Store, "runs", runID) }

func (p Paths) answerFile(runID string, phase int, id string) string {
	return filepath.Join(p.runDir(runID), fmt.Sprintf("%03d-%s.response.json", phase, id))
}

// requestCopy is where the run keeps a request as it was written.
func (p Paths) requestCopy(runID, id string) string {
	return filepath.Join(p.runDir(runID), id+".request.json")
}

func (p Paths) promptFile(runID, id string) string {
	return filepath.Join(p.runDir(runID), id+".prompt.md")
}

// RejectedPattern matches the files responses are set aside as.
const RejectedPattern = ".agent-response.rejected-*.json"

// writeJSON writes v, indented, atomically (temp file, fsync, rename).
func writeJSON(path string, v any) error {
	data, err := encodeJSON(v)
	if err != nil {
		return err
	}
	return writeAtomic(path, data)
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return store.WriteFileAtomic(path, data, 0o644)
}

// setAside renames a response that must not be consumed to
// .agent-response.rejected-<time>.json beside it and returns the new path.
// It never overwrites an earlier one.
func setAside(path string, now time.Time) (string, error) {
	base := filepath.Join(filepath.Dir(path), ".agent-response.rejected-"+now.UTC().Format("20060102T150405Z"))
	for i := 0; ; i++ {
		dst := base + ".json"
		if i > 0 {
			dst = base + "-" + strconv.Itoa(i) + ".json"
		}
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if err := os.Rename(path, dst); err != nil {
			return "", fmt.Errorf("setting aside %s: %w", path, err)
		}
		return dst, store.SyncDir(filepath.Dir(path))
	}
}

// moveInto renames src to dst (creating dst's directory) durably: the
// consumption of a response is this one rename.
func moveInto(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		return err
	}
	if err := store.SyncDir(filepath.Dir(dst)); err != nil {
		return err
	}
	return store.SyncDir(filepath.Dir(src))
}

// readIfExists reads path; a missing file is (nil, nil).
func readIfExists(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
