package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/baton-cli/baton/internal/errs"
)

// Only regular files are state. A FIFO in place of progress.json would make
// every read block forever (a writer while holding the lock), a device
// would be read without end, and a directory cannot be renamed over. Every
// read of a file under the state directory goes through OpenRegular, which
// opens without blocking and checks the type before reading a byte.

// OpenRegular opens path for reading without blocking and returns it with
// its FileInfo; anything but a regular file (after symbolic links) is an
// Invalid error naming the path and what it is. A missing file is an error
// satisfying errors.Is(err, fs.ErrNotExist).
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := openNonblock(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if dest, lerr := os.Readlink(path); lerr == nil {
				return nil, nil, errs.New(errs.Invalid, "%s is a symbolic link to %s, which does not exist: nothing was read or written. A person must point the link at the state file", path, dest)
			}
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("opening %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, NotRegular(path, fi)
	}
	return f, fi, nil
}

// notRegularLock is the error for a lock file of baton's that is not a
// regular file.
func notRegularLock(path string, fi os.FileInfo) error {
	return errs.New(errs.Invalid, "%s is %s, not baton's lock file (a regular file): nothing was written. Stop and report it; a person removes it, and baton makes it again", path, describeMode(fi.Mode()))
}

// NotRegular is the error for a state path that is not a regular file.
func NotRegular(path string, fi os.FileInfo) error {
	return errs.New(errs.Invalid, "%s is %s, not a regular file: baton keeps its state only in regular files and read nothing from it; nothing was written. A person must look at it (see 'baton verify')", path, describeMode(fi.Mode()))
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file (" + m.Type().String() + ")"
}

// ReadRegular returns the bytes of the regular file path; a missing file is
// (nil, nil).
func ReadRegular(path string) ([]byte, error) {
	f, fi, err := OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, fi.Size())
}

// readAll reads f to its end, expecting about size bytes.
func readAll(f *os.File, size int64) ([]byte, error) {
	data := make([]byte, 0, size+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f.Name(), err)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// target is where a write of the state file at path lands: a symbolic link
// is written through to the file it names (the link stays a link, and the
// file it points at is replaced atomically beside itself), so that a state
// file kept elsewhere and linked in is never silently replaced by a copy.
// A link whose target does not exist is refused.
func target(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", errs.New(errs.Invalid, "%s is a symbolic link whose target cannot be followed (%v): nothing was written. A person must point the link at the state file", path, err)
	}
	return real, nil
}
