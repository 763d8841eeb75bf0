package scripts

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInstallKeepsWhatWasThere: the predecessor's own scripts, a link to
// them, and a scripts/ directory that links into the predecessor's install
// are moved aside, never overwritten or written through; baton's own
// scripts are left as they are.
func TestInstallKeepsWhatWasThere(t *testing.T) {
	root := t.TempDir()
	theirs := filepath.Join(root, "predecessor", "scripts")
	if err := os.MkdirAll(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range Names {
		os.WriteFile(filepath.Join(theirs, n), []byte("# predecessor "+n+"\n"), 0o644)
	}

	// a scripts/ that is a link to the predecessor's install
	proj := filepath.Join(root, "proj")
	os.MkdirAll(proj, 0o755)
	dir := filepath.Join(proj, "scripts")
	if err := os.Symlink(theirs, dir); err != nil {
		t.Fatal(err)
	}
	paths, moved, err := Install(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(Names) || len(moved) != 1 || moved[0].To != dir+BackupSuffix {
		t.Fatalf("paths %v moved %v", paths, moved)
	}
	for _, n := range Names {
		if b, _ := os.ReadFile(filepath.Join(theirs, n)); string(b) != "# predecessor "+n+"\n" {
			t.Errorf("%s was written through the link: %q", n, b)
		}
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		t.Errorf("scripts/ is now a directory of baton's own: %v %v", fi, err)
	}

	// files of other content and a link to a file: moved aside, one by one
	os.WriteFile(filepath.Join(dir, "progress.py"), []byte("# edited\n"), 0o644)
	os.Remove(filepath.Join(dir, "reviews.py"))
	os.Symlink(filepath.Join(theirs, "reviews.py"), filepath.Join(dir, "reviews.py"))
	_, moved, err = Install(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 2 {
		t.Fatalf("moved %v, want progress.py and reviews.py", moved)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "progress.py"+BackupSuffix)); string(b) != "# edited\n" {
		t.Errorf("progress.py's backup holds %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "reviews.py"+BackupSuffix)); fi == nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link is kept as a link")
	}
	if b, _ := os.ReadFile(filepath.Join(theirs, "reviews.py")); string(b) != "# predecessor reviews.py\n" {
		t.Errorf("reviews.py was written through the link: %q", b)
	}

	// again: baton's scripts stay, the second backup gets its own name
	os.WriteFile(filepath.Join(dir, "features.py"), []byte("# other\n"), 0o644)
	_, moved, err = Install(dir)
	if err != nil || len(moved) != 1 || moved[0].To != filepath.Join(dir, "features.py"+BackupSuffix) {
		t.Fatalf("moved %v (%v)", moved, err)
	}
	os.WriteFile(filepath.Join(dir, "features.py"), []byte("# other again\n"), 0o644)
	if _, moved, _ = Install(dir); len(moved) != 1 || moved[0].To != filepath.Join(dir, "features.py"+BackupSuffix+".2") {
		t.Fatalf("a taken backup name is never overwritten: %v", moved)
	}
	if _, moved, _ = Install(dir); len(moved) != 0 {
		t.Errorf("baton's own scripts are not moved: %v", moved)
	}
	want, _ := files.ReadFile("features.py")
	if b, _ := os.ReadFile(filepath.Join(dir, "features.py")); string(b) != string(want) {
		t.Error("features.py is baton's")
	}
}
