package store

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// datasync makes f's content durable, with what reading it needs (its
// size, its blocks), but not its times: fdatasync, which writes no inode
// when the size is unchanged.
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if serr = syscall.Fdatasync(int(fd)); serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}

// startWriteback starts writing f's dirty pages out, without waiting for
// them: the fsync after it, or another file's, then finds them on their
// way (a hint: an error is the fsync's to report).
func startWriteback(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SyncFileRange(int(fd), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
	})
}
